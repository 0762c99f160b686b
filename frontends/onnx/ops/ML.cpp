//===- ML.cpp - ai.onnx.ml ops ----------------------------------------------===//
//
// The classical-ML domain's elementwise and indexing ops (tree ensembles
// are in Trees.cpp; the other estimators are not imported).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

constexpr llvm::StringLiteral kMlDomain = "ai.onnx.ml";

/// Binarizer: 1 where x > threshold, else 0, in x's type.
LogicalResult importBinarizer(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Value above = compare(ctx, ComparePredicate::gt, x,
                        ctx.scalarLike(x, ctx.floatAttr("threshold", 0.0f)));
  return ctx.setOutput(0, ctx.cast(above, NodeContext::elementTypeOf(x)));
}

/// ArrayFeatureExtractor: the entries of the last axis that the (flattened)
/// indices name; a vector gives one row, as ONNX Runtime does.
LogicalResult importArrayFeatureExtractor(NodeContext &ctx) {
  Value x = ctx.input(0), indices = ctx.input(1);
  if (!x || !indices)
    return failure();
  int64_t rank = NodeContext::rankOf(x);
  if (rank < 1)
    return ctx.invalid("the input must have at least one dim");
  Value flat = ctx.make<ReshapeOp>(indices, ctx.i64s({-1}));
  Value y = ctx.make<GatherOp>(x, flat, ctx.i64(rank - 1));
  return ctx.setOutput(0, rank == 1 ? unsqueeze(ctx, y, {0}) : y);
}

} // namespace

void registerMlOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Binarizer", 1, any, importBinarizer, kMlDomain);
  r.add("ArrayFeatureExtractor", 1, any, importArrayFeatureExtractor, kMlDomain);
}

} // namespace kiln::onnx_frontend
