//===- Matchers.h - recognising constants in kiln IR ------------*- C++ -*-===//
//
// Questions passes ask about a value before rewriting around it: is it a
// constant (seen through reshapes, which the folders leave alone on weight
// resources), and does it vary only along one dim of a result it is
// broadcast against (a per-channel bias); and the activations the importer
// writes as several ops (HardSigmoid, HardSwish).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_UTILS_MATCHERS_H
#define KILN_DIALECTS_KILN_UTILS_MATCHERS_H

#include "dialects/kiln/IR/KilnDialect.h"

namespace kiln {

/// The `kiln.constant` behind `value`, looking through reshapes, or null.
ConstantOp constantThroughReshapes(mlir::Value value);

/// Whether `value`, broadcast against `result` (numpy rules), has static
/// dims that are 1 everywhere but at `result`'s dim `channel`, where they
/// equal `result`'s static size.
bool variesOnlyAlong(mlir::Value value, mlir::RankedTensorType result, int64_t channel);

/// The value every element of a float `kiln.constant` holds (rank 0, or
/// a splat of any shape), or nullopt; a `kiln.kernel`'s block argument is
/// its operand.
std::optional<double> splatValue(mlir::Value value);

/// A hard sigmoid, clip(x * alpha + beta, 0, 1), as the ONNX importer
/// writes HardSigmoid: a mul by a splat constant (either operand order),
/// an add of one, a clip to [0, 1]; and HardSwish, x * hard sigmoid(x)
/// with alpha 1/6 and beta 1/2, the same and a mul by x.
struct HardActivation {
  /// x.
  mlir::Value input;
  double alpha = 0, beta = 0;
  /// The mul, add and clip, then the HardSwish's mul.
  llvm::SmallVector<mlir::Operation *, 4> ops;
};

/// The hard sigmoid `clip` ends, or nullopt.
std::optional<HardActivation> matchHardSigmoid(ClipOp clip);
/// The HardSwish `mul` ends, or nullopt.
std::optional<HardActivation> matchHardSwish(MulOp mul);

} // namespace kiln

#endif // KILN_DIALECTS_KILN_UTILS_MATCHERS_H
