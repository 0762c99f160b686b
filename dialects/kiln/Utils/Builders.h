//===- Builders.h - kiln op sequences more than one pass builds -*- C++ -*-===//
//
// Small compositions of kiln ops (result types inferred) that passes in
// different phases need alike: kiln-expand-composites' transposed
// convolution and the convolution and pool gradient rules both spread
// elements apart by a stride.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_UTILS_BUILDERS_H
#define KILN_DIALECTS_KILN_UTILS_BUILDERS_H

#include "mlir/IR/Builders.h"

namespace kiln {

/// kiln.pad of zeros by `pads` (every dim's low pad, then every high pad;
/// a negative pad crops); `v` itself when every pad is 0.
mlir::Value zeroPad(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                    llvm::ArrayRef<int64_t> pads);

/// `x` ([N, C, D...], the D static) with stride - 1 zeros between
/// neighbours along each spatial dim: [N, C, (D - 1) * stride + 1, ...].
/// Reshaped to [N, C, D0, 1, D1, 1, ...], padded to the stride, merged,
/// the trailing zeros cut; `x` itself when every stride is 1.
mlir::Value zeroStuff(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      llvm::ArrayRef<int64_t> strides);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_UTILS_BUILDERS_H
