//===- onnx_import.cpp - fuzz the ONNX loader, importer and graph phase ---===//
//
// Input: the bytes of an ONNX model. They are parsed and checked
// (ModelLoader), imported into kiln IR (every node tried), checked against
// the import contract and, when they pass, taken through the graph phase
// (shape inference, folding, canonicalisation), all in process. Any
// outcome but a crash, a hang or a sanitizer report is fine: a bad model
// must only be refused.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzContext.h"

#include "frontends/onnx/Importer.h"


#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::fuzz::QuietContext quiet;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  kiln::onnx_frontend::ImportResult imported =
      kiln::onnx_frontend::importOnnxBytes(quiet.context, bytes, "fuzz.onnx");
  if (!imported.module)
    return 0;
  kiln::fuzz::runGraphPhase(quiet.context, *imported.module);
  return 0;
}
