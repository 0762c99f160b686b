//===- TensorFiles.h - tensors in .npy and ONNX .pb files -------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_TENSORFILES_H
#define KILN_TOOLS_KILN_TENSORFILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cli {

/// A dense row-major tensor on the host, dtype as kiln_dtype.
struct HostTensor {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<char> bytes;
  /// KILN_DTYPE_STRING: the strings (`bytes` is then empty until
  /// pointStrings).
  std::vector<std::string> strings;
  int64_t numElements() const;
  /// A string tensor's `bytes` become its elements for the runtime: one
  /// pointer to each of `strings` (valid while they are unchanged).
  void pointStrings();
};

/// Reads a NumPy .npy (C order, little-endian) or an ONNX TensorProto .pb.
llvm::Expected<HostTensor> readTensor(llvm::StringRef path);
/// The same for a file's bytes in memory (`name` stands for it in
/// messages). Sizes are checked before anything is allocated.
llvm::Expected<HostTensor> parseTensor(llvm::StringRef data, llvm::StringRef name);
/// Writes a NumPy .npy file.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

/// Element `i` of a tensor as double (for comparisons).
double elementAsDouble(const HostTensor &tensor, int64_t i);
double elementAsDouble(int32_t dtype, const void *data, int64_t i);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_TENSORFILES_H
