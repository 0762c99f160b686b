//===- EmptyReshapes.cpp - collapses of tensors with no elements ----------===//
//
// Implements kiln-empty-reshapes. A tensor with a static 0 dim next to a
// dynamic one (a string split of no strings, a batch of 0 rows) collapses
// to a dynamic dim; bufferisation would make that dim a static 0, which
// memref.collapse_shape refuses. The collapse holds no elements, so an
// empty tensor of its size takes its place.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln {
#define GEN_PASS_DEF_EMPTYRESHAPES
#include "compiler/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace {

/// The collapse as `tensor.empty` of its size, cast to its type.
void replaceWithEmpty(tensor::CollapseShapeOp collapse) {
  OpBuilder b(collapse);
  Location loc = collapse.getLoc();
  RankedTensorType source = collapse.getSrcType();
  RankedTensorType result = collapse.getResultType();
  SmallVector<int64_t> shape;
  SmallVector<Value> sizes;
  for (auto [dim, group] : llvm::enumerate(collapse.getReassociationIndices())) {
    bool empty = llvm::any_of(group, [&](int64_t i) { return source.getDimSize(i) == 0; });
    if (empty || !result.isDynamicDim(dim)) {
      shape.push_back(empty ? 0 : result.getDimSize(dim));
      continue;
    }
    shape.push_back(ShapedType::kDynamic);
    Value size;
    for (int64_t i : group) {
      Value d = tensor::DimOp::create(b, loc, collapse.getSrc(), i);
      size = size ? arith::MulIOp::create(b, loc, size, d).getResult() : d;
    }
    sizes.push_back(size);
  }
  Value empty = tensor::EmptyOp::create(b, loc, shape, result.getElementType(), sizes);
  if (empty.getType() != result)
    empty = tensor::CastOp::create(b, loc, result, empty);
  collapse.getResult().replaceAllUsesWith(empty);
  collapse.erase();
}

struct EmptyReshapes : kiln::impl::EmptyReshapesBase<EmptyReshapes> {
  void runOnOperation() override {
    SmallVector<tensor::CollapseShapeOp> collapses;
    getOperation().walk([&](tensor::CollapseShapeOp collapse) {
      RankedTensorType source = collapse.getSrcType();
      if (llvm::is_contained(source.getShape(), 0) && !source.hasStaticShape())
        collapses.push_back(collapse);
    });
    for (tensor::CollapseShapeOp collapse : collapses)
      replaceWithEmpty(collapse);
  }
};

} // namespace
