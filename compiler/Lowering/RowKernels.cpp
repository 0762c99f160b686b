//===- RowKernels.cpp - a reduction kernel -> one loop over its rows ------===//
//
// A `kiln.kernel reduction` with `kiln.outer_dims = k` becomes an
// `scf.forall` over the result's first k dims. Each iteration slices one
// row out of every input (a dim of 1 that broadcasts is read at 0; a
// dynamic dim that may be 1 at run time, RuntimeBroadcast, is checked: not
// one whose size every input shares), runs the kernel's ops
// on rows (their types with the outer dims set to 1) and writes its row of
// the result. The kiln ops in the loop are then lowered like any other.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln::lowering {

namespace {

/// `type` with the dims aligned to the first `k` of `rank` dims set to 1.
RankedTensorType rowType(RankedTensorType type, int64_t rank, int64_t k) {
  SmallVector<int64_t> shape(type.getShape());
  int64_t offset = rank - type.getRank();
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i + offset < k)
      shape[i] = 1;
  return type.clone(shape);
}

/// The row of `value` at `ivs` (the loop's indices over the first k dims).
Value rowOf(OpBuilder &b, Location loc, Value value, ValueRange ivs, int64_t rank,
            const RuntimeBroadcast &broadcast) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t k = static_cast<int64_t>(ivs.size());
  int64_t offset = rank - type.getRank();
  if (offset >= k)
    return value; // inner dims only: every row reads all of it
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    int64_t j = i + offset;
    strides.push_back(b.getIndexAttr(1));
    if (j >= k) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(type.getDimSize(i)));
      continue;
    }
    sizes.push_back(b.getIndexAttr(1));
    if (type.getDimSize(i) == 1) {
      offsets.push_back(b.getIndexAttr(0)); // broadcast along this dim
    } else if (!broadcast.mayStretch(type, i)) {
      offsets.push_back(ivs[j]);
    } else {
      // A dynamic dim broadcasts when it is 1 at run time.
      Value dim = tensor::DimOp::create(b, loc, value, i);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dim, one);
      offsets.push_back(arith::SelectOp::create(b, loc, isOne, zero, ivs[j]).getResult());
    }
  }
  return tensor::ExtractSliceOp::create(b, loc, rowType(type, rank, k), value, offsets, sizes,
                                        strides);
}

} // namespace

void lowerReductionKernel(KernelOp kernel) {
  int64_t k = kernel->getAttrOfType<IntegerAttr>(KilnDialect::OuterDimsAttrHelper::getNameStr()).getInt();
  auto resultType = cast<RankedTensorType>(kernel.getResult(0).getType());
  int64_t rank = resultType.getRank();
  Location loc = kernel.getLoc();
  OpBuilder b(kernel);
  // The loop runs over the result's outer dims; a dynamic one is the
  // largest of the inputs' dims it broadcasts from.
  RuntimeBroadcast broadcast(resultType, kernel.getInputs());
  SmallVector<OpFoldResult> bounds;
  SmallVector<Value> dynamicSizes;
  for (int64_t j = 0; j < k; ++j) {
    if (!resultType.isDynamicDim(j)) {
      bounds.push_back(b.getIndexAttr(resultType.getDimSize(j)));
      continue;
    }
    Value size = broadcast.resultSize(b, loc, j);
    if (!size) // every input is 1 there
      size = arith::ConstantIndexOp::create(b, loc, 1);
    bounds.push_back(size);
    dynamicSizes.push_back(size);
  }
  Value init = tensor::EmptyOp::create(b, loc, resultType, dynamicSizes);
  auto forall = scf::ForallOp::create(b, loc, bounds, ValueRange{init}, std::nullopt);
  SmallVector<Value> ivs = forall.getInductionVars(); // (returned by value)
  b.setInsertionPoint(forall.getTerminator());
  IRMapping map;
  Block &body = kernel.getBody().front();
  for (auto [argument, input] : llvm::zip(body.getArguments(), kernel.getInputs()))
    map.map(argument, rowOf(b, loc, input, ivs, rank, broadcast));
  for (Operation &op : kernel.bodyOps()) {
    Operation *row = b.clone(op, map);
    for (Value result : row->getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType()))
        result.setType(rowType(type, rank, k));
  }
  Value row = map.lookup(cast<YieldOp>(body.getTerminator()).getValues()[0]);
  // Its row of the result.
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t j = 0; j < rank; ++j) {
    offsets.push_back(j < k ? OpFoldResult(ivs[j]) : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(b.getIndexAttr(j < k ? 1 : resultType.getDimSize(j)));
    strides.push_back(b.getIndexAttr(1));
  }
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, row, forall.getRegionIterArgs()[0], offsets,
                                        sizes, strides);
  kernel.getResult(0).replaceAllUsesWith(forall.getResult(0));
  kernel.erase();
}

} // namespace kiln::lowering
