//===- Matchers.h - recognising constants in kiln IR ------------*- C++ -*-===//
//
// Questions passes ask about a value before rewriting around it: is it a
// constant (seen through reshapes, which the folders leave alone on weight
// resources), and does it vary only along one dim of a result it is
// broadcast against (a per-channel bias).
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

} // namespace kiln

#endif // KILN_DIALECTS_KILN_UTILS_MATCHERS_H
