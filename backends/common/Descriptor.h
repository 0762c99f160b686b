//===- Descriptor.h - the artifact's descriptor, header and files -*- C++ -*-===//
//
// What every backend's artifact shares (runtime/include/kiln/
// kiln_model_abi.h): element types as KILN_DTYPE_* values, the
// `kiln_model_descriptor` with its tensor and library-call tables, the C
// header, and linking the backend's objects with its generated entry
// point into a .so, .a or .o. A backend writes only its entry point (the
// `run` function that calls its code) and its object code.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_COMMON_DESCRIPTOR_H
#define KILN_BACKENDS_COMMON_DESCRIPTOR_H

#include "compiler/Target/Backend.h"
#include "kiln/kiln_model_abi.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::artifact {

/// The KILN_DTYPE_* value of an element type, or 0 if it has none.
int32_t dtypeOf(mlir::Type type);
/// An input's or output's (KILN_DTYPE_STRING for a string tensor).
int32_t dtypeOf(const ModelTensor &t);
/// Bytes per element of a KILN_DTYPE_* value (0 if unknown).
size_t dtypeSize(int32_t dtype);

/// A C string literal for `s`.
std::string quoted(llvm::StringRef s);

/// What the descriptor says beyond the contents.
struct DescriptorFields {
  uint32_t device = 0;          ///< kiln_device_kind
  std::string requiredFeatures; ///< comma-separated
  /// A `static int NAME(...)` of type kiln_model_run_fn defined before
  /// the descriptor.
  std::string runFunction = "run";
  /// An expression for the descriptor's `gpu` (a kiln_gpu_code pointer
  /// defined before the descriptor), or empty for none.
  std::string gpuCode;
};

/// C source: the tensor tables, the library-call table (arrays
/// `callN_in`, `callN_w`, ... and `library_calls`), the report and
/// `kiln_model_descriptor`.
std::string descriptorSource(const ArtifactContents &contents, const DescriptorFields &fields);

/// The C header written next to the artifact.
std::string headerSource(const ArtifactContents &contents, llvm::StringRef stem);

/// `call` as the runtime's `kiln_library_call` record, in memory (the
/// arrays it points into live here), with `weights` as its constant
/// weights: what a backend hands the runtime's devices at compile time.
struct LibraryCallRecord {
  explicit LibraryCallRecord(const LibraryCall &call, const void *weights);
  LibraryCallRecord(const LibraryCallRecord &) = delete;
  LibraryCallRecord &operator=(const LibraryCallRecord &) = delete;
  std::vector<std::vector<int64_t>> dims;
  std::vector<const int64_t *> dimPointers;
  std::vector<int32_t> ranks;
  std::vector<int64_t> params;
  kiln_library_call record;
};

/// A constant's bytes, kept out of the code generator (LLVM handles
/// hundreds of megabytes of constants slowly): the object code declares
/// `symbol`, the artifact's read-only data defines it.
struct ConstantBlob {
  std::string symbol;
  uint64_t alignment = 64;
  llvm::ArrayRef<char> bytes; ///< owned by the module's attributes
  /// In the large read-only data section (.lrodata, placed after every
  /// other section), reached through the GOT: the model's weights when
  /// they total more than kLargeConstantBytes, so that code, data and the
  /// GOT stay within the 2 GiB a PC-relative reference reaches.
  bool large = false;
};

/// Weights totalling more than this go to the large data section.
inline constexpr uint64_t kLargeConstantBytes = uint64_t(1) << 30;

/// Compiles the C `entrySource` (against the runtime's headers) and links
/// it with `object` (a relocatable object) and the `constants` (one
/// read-only section, each hidden symbol aligned as asked) into
/// `contents.outputPath` (.so, .a or .o by its extension), then writes the
/// header next to it. The same inputs give the same bytes.
llvm::Error writeArtifact(llvm::StringRef object, llvm::StringRef entrySource,
                          const ArtifactContents &contents,
                          llvm::ArrayRef<ConstantBlob> constants = {});

} // namespace kiln::artifact

#endif // KILN_BACKENDS_COMMON_DESCRIPTOR_H
