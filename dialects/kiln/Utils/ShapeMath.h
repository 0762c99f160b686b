//===- ShapeMath.h - shape rules of kiln ops, in plain C++ ------*- C++ -*-===//
//
// The size arithmetic behind kiln's shape inference: broadcasting, window
// (conv/pool) output sizes, reshape resolution, slice sizes. Plain C++ with
// no MLIR types so that the rules are unit-tested on their own and can be
// reused by the runtime's shape checks later. A dynamic dim is kDynamic
// (the same value as mlir::ShapedType::kDynamic).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_UTILS_SHAPEMATH_H
#define KILN_DIALECTS_KILN_UTILS_SHAPEMATH_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kiln::shape {

/// Marks a dim whose size is not known at compile time.
constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

using Dims = std::vector<int64_t>;

/// A computed shape or the reason it cannot be computed.
struct ShapeOrError {
  Dims dims;
  std::string error; ///< empty on success
  bool ok() const { return error.empty(); }
  static ShapeOrError failure(std::string why) { return {{}, std::move(why)}; }
};

/// Numpy broadcasting of any number of shapes. A dynamic dim broadcast with 1
/// stays dynamic; with a static size n > 1 it becomes n (it must be n or 1
/// at run time).
ShapeOrError broadcast(const std::vector<Dims> &shapes);

/// Output extent of a sliding window (convolution, pooling) over `input`
/// positions. kDynamic in gives kDynamic out. ceil mode drops a last window
/// that would start inside the high padding. Fails when the window does not
/// fit even once or a parameter is not positive.
ShapeOrError windowOutput(int64_t input, int64_t kernel, int64_t stride,
                          int64_t padLow, int64_t padHigh, int64_t dilation,
                          bool ceilMode);

/// The result of kiln.reshape: each entry of `spec` is a positive size, 0
/// (copy the input's dim at that index) or -1 (inferred, at most once).
ShapeOrError reshape(const Dims &input, const Dims &spec);

/// Number of elements a strided slice of a dim of size `dim` takes, with
/// ONNX Slice's clamping of negative and out-of-range starts and ends.
int64_t sliceExtent(int64_t dim, int64_t start, int64_t end, int64_t step);

/// Row-major strides (in elements) of a static shape.
Dims strides(const Dims &shape);

/// Product of static dims, or kDynamic when any dim is dynamic.
int64_t numElements(const Dims &dims);

/// Whether a transpose's `permutation` swaps the last two dims and keeps
/// the others (a matrix transpose, batched).
bool swapsLastTwo(const Dims &permutation);

} // namespace kiln::shape

#endif // KILN_DIALECTS_KILN_UTILS_SHAPEMATH_H
