//===- Decompose.h - composite ops into primitives --------------*- C++ -*-===//
//
// The decompositions kiln-decompose and kiln-expand-composites apply, for
// other passes that need some of them (kiln-differentiate differentiates
// normalisation and topk through their primitives).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_GRAPH_DECOMPOSE_H
#define KILN_COMPILER_GRAPH_DECOMPOSE_H

#include "mlir/IR/PatternMatch.h"

namespace kiln {

/// layer_norm and batch_norm (inference form: its mean and variance are
/// operands) as reductions and elementwise ops.
void populateNormalizationDecompositions(mlir::RewritePatternSet &patterns);

/// conv_transpose as primitives (kiln-expand-composites).
void populateCompositeExpansions(mlir::RewritePatternSet &patterns);

} // namespace kiln

#endif // KILN_COMPILER_GRAPH_DECOMPOSE_H
