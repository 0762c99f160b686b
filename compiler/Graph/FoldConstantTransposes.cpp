//===- FoldConstantTransposes.cpp - transposed constants at compile time --===//
//
// Implements kiln-fold-constant-transposes (see compiler/Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_FOLDCONSTANTTRANSPOSES
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;

namespace {

/// The bytes of every element of `value` in row-major order, or nothing
/// for a splat (the dialect's folder handles those), bit-packed booleans
/// and blobs of the wrong size.
std::optional<ArrayRef<char>> rawBytes(ElementsAttr value, unsigned elementBytes) {
  size_t expected = static_cast<size_t>(value.getNumElements()) * elementBytes;
  ArrayRef<char> raw;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt;
    raw = dense.getRawData();
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    if (!resource.getRawHandle().getBlob())
      return std::nullopt;
    raw = resource.getRawHandle().getBlob()->getData();
  } else {
    return std::nullopt;
  }
  if (raw.size() != expected)
    return std::nullopt;
  return raw;
}

struct TransposeConstant : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose, PatternRewriter &b) const override {
    auto constant = transpose.getInput().getDefiningOp<ConstantOp>();
    RankedTensorType in = transpose.getInput().getType(), out = transpose.getType();
    if (!constant || !in.hasStaticShape() || !out.hasStaticShape())
      return failure();
    Type element = in.getElementType();
    if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
      return failure();
    unsigned bytes = element.getIntOrFloatBitWidth() / 8;
    std::optional<ArrayRef<char>> raw = rawBytes(constant.getValue(), bytes);
    if (!raw)
      return failure();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    int64_t rank = in.getRank();
    // Output index i reads input index j with j[perm[d]] = i[d].
    SmallVector<int64_t> inStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      inStrides[d] = inStrides[d + 1] * in.getDimSize(d + 1);
    SmallVector<int64_t> step(rank); // input stride of each output dim
    for (int64_t d = 0; d < rank; ++d)
      step[d] = inStrides[perm[d]];
    std::vector<char> result(raw->size());
    SmallVector<int64_t> index(rank, 0);
    int64_t source = 0;
    for (int64_t flat = 0, n = out.getNumElements(); flat < n; ++flat) {
      std::memcpy(result.data() + flat * bytes, raw->data() + source * bytes, bytes);
      for (int64_t d = rank - 1; d >= 0; --d) {
        source += step[d];
        if (++index[d] < out.getDimSize(d))
          break;
        source -= step[d] * out.getDimSize(d);
        index[d] = 0;
      }
    }
    AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
        ArrayRef<char>(result), alignof(int64_t));
    auto value = DenseResourceElementsAttr::get(out, "transposed", std::move(blob));
    b.replaceOpWithNewOp<ConstantOp>(transpose, cast<ElementsAttr>(value));
    return success();
  }
};

struct FoldConstantTransposesPass
    : kiln::impl::FoldConstantTransposesBase<FoldConstantTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TransposeConstant>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
