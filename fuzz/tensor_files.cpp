//===- tensor_files.cpp - fuzz the .npy and TensorProto .pb readers -------===//
//
// Input: the bytes of a tensor file. Both readers take it: the CLI's
// (`kiln run --input`, `kiln check`: .npy or .pb into host memory) and
// the importer's (`--freeze-input`: a TensorProto into an elements
// attribute; external data has no folder here and must be refused).
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzContext.h"

#include "frontends/onnx/TensorData.h"
#include "tools/kiln/TensorFiles.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto host = kiln::cli::parseTensor(bytes, "fuzz.npy");
  if (host) {
    // Read back every element, as `kiln check` compares them.
    double sum = 0;
    for (int64_t i = 0, n = host->numElements(); i < n; ++i)
      sum += kiln::cli::elementAsDouble(*host, i);
    (void)sum;
  } else {
    llvm::consumeError(host.takeError());
  }
  kiln::fuzz::QuietContext quiet;
  auto attr = kiln::onnx_frontend::parseTensorProto(&quiet.context, bytes, "fuzz.pb", "");
  if (!attr)
    llvm::consumeError(attr.takeError());
  return 0;
}
