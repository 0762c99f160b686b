//===- ML.h - what the ai.onnx.ml importers share ---------------*- C++ -*-===//

#ifndef KILN_FRONTENDS_ONNX_OPS_ML_H
#define KILN_FRONTENDS_ONNX_OPS_ML_H

#include "frontends/onnx/NodeContext.h"

namespace kiln::onnx_frontend {

/// The classical-ML score transforms, by name, on [batch, scores] (ONNX's
/// reference's formulas): NONE, LOGISTIC, SOFTMAX (per row), SOFTMAX_ZERO
/// (zeros kept out of the softmax), PROBIT (sqrt 2 erfinv(2x - 1), the
/// reference's approximation of erfinv). Records an issue for another
/// name and returns null.
mlir::Value mlPostTransform(NodeContext &ctx, mlir::Value scores, llvm::StringRef name);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_OPS_ML_H
