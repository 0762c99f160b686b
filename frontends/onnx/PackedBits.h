//===- PackedBits.h - ONNX's packing of 4- and 2-bit elements ---*- C++ -*-===//
//
// ONNX stores int4 / uint4 / float4e2m1 two to a byte and int2 / uint2 four
// to a byte, the first element in the low bits; Kiln keeps one element per
// byte (kiln_model_abi.h). Header-only: the importer (weights) and the
// tools' tensor files (test data) both unpack.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_PACKEDBITS_H
#define KILN_FRONTENDS_ONNX_PACKEDBITS_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace kiln::onnx_frontend {

/// Bytes that `count` elements of `bits` (4 or 2) take packed.
inline size_t packedSize(size_t count, unsigned bits) {
  size_t perByte = 8 / bits;
  return (count + perByte - 1) / perByte;
}

/// Writes `count` elements of `bits` from `packed` (packedSize bytes) to
/// `out`, one per byte, the element's bits low and the rest zero.
inline void unpackBits(llvm::StringRef packed, unsigned bits, size_t count, char *out) {
  size_t perByte = 8 / bits;
  unsigned mask = (1u << bits) - 1;
  for (size_t i = 0; i < count; ++i)
    out[i] = static_cast<char>(
        (static_cast<unsigned char>(packed[i / perByte]) >> (bits * (i % perByte))) & mask);
}

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_PACKEDBITS_H
