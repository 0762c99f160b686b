//===- ShapeEntries.cpp - shape entries traced to dims and constants ------===//
//
// See ShapeEntries.h.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/ShapeEntries.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace kiln;

std::optional<SmallVector<int64_t>> kiln::constantInts(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> out;
  bool bits = dense.getElementType().isInteger(1) || dense.getElementType().isUnsignedInteger();
  for (const APInt &x : dense.getValues<APInt>())
    out.push_back(bits ? static_cast<int64_t>(x.getZExtValue()) : x.getSExtValue());
  return out;
}

namespace {

/// A 1-D (or rank-0) tensor of static length, else null.
RankedTensorType staticVector(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() <= 1 && type.hasStaticShape() ? type : nullptr;
}

/// Appends the nodes of entry `i` of `tensor` to `expr` (its root last).
bool traceInto(ShapeEntryExpr &expr, Value tensor, int64_t i, int depth) {
  using Kind = ShapeEntryExpr::Kind;
  RankedTensorType type = staticVector(tensor);
  Operation *def = tensor.getDefiningOp();
  if (!type || !def || depth > 16 || !isa<IntegerType>(type.getElementType()) || i < 0 ||
      i >= type.getNumElements())
    return false;
  auto length = [](Value v) { return cast<RankedTensorType>(v.getType()).getNumElements(); };
  auto next = [&](Value v, int64_t at) { return traceInto(expr, v, at, depth + 1); };
  if (std::optional<SmallVector<int64_t>> ints = constantInts(tensor)) {
    expr.nodes.push_back({Kind::constant, (*ints)[i]});
    return true;
  }
  if (auto shapeOf = dyn_cast<ShapeOfOp>(def)) {
    if (!isa<RankedTensorType>(shapeOf.getInput().getType()))
      return false;
    expr.nodes.push_back({Kind::dim, i, shapeOf.getInput()});
    return true;
  }
  if (isa<ReshapeOp, CastOp>(def) && staticVector(def->getOperand(0)) &&
      isa<IntegerType>(cast<RankedTensorType>(def->getOperand(0).getType()).getElementType()))
    return next(def->getOperand(0), i);
  if (auto gather = dyn_cast<GatherOp>(def)) {
    std::optional<SmallVector<int64_t>> indices = constantInts(gather.getIndices());
    RankedTensorType data = staticVector(gather.getData());
    if (!indices || gather.getAxis() != 0 || !data || data.getRank() != 1 ||
        static_cast<int64_t>(indices->size()) <= i)
      return false;
    int64_t at = (*indices)[i], n = data.getDimSize(0);
    return next(gather.getData(), at < 0 ? at + n : at);
  }
  if (auto concat = dyn_cast<ConcatOp>(def)) {
    for (Value piece : concat.getInputs()) {
      if (!staticVector(piece))
        return false;
      if (i < length(piece))
        return next(piece, i);
      i -= length(piece);
    }
    return false;
  }
  if (auto slice = dyn_cast<SliceOp>(def)) {
    RankedTensorType input = staticVector(slice.getInput());
    if (!input || input.getRank() != 1 || slice.getSteps()[0] <= 0)
      return false;
    int64_t n = input.getDimSize(0), start = slice.getStarts()[0];
    start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
    return next(slice.getInput(), start + i * slice.getSteps()[0]);
  }
  if (auto select = dyn_cast<SelectOp>(def)) {
    std::optional<SmallVector<int64_t>> condition = constantInts(select.getCondition());
    if (!condition || !staticVector(select.getOnTrue()) || !staticVector(select.getOnFalse()))
      return false;
    auto at = [&](Value v) { return length(v) == 1 ? int64_t(0) : i; };
    Value chosen = (*condition)[at(select.getCondition())] ? select.getOnTrue()
                                                            : select.getOnFalse();
    return next(chosen, at(chosen));
  }
  if (isa<AddOp, SubOp, MulOp, DivOp>(def)) {
    Value lhs = def->getOperand(0), rhs = def->getOperand(1);
    if (!staticVector(lhs) || !staticVector(rhs) || !next(lhs, length(lhs) == 1 ? 0 : i))
      return false;
    unsigned x = expr.nodes.size() - 1;
    if (!next(rhs, length(rhs) == 1 ? 0 : i))
      return false;
    unsigned y = expr.nodes.size() - 1;
    Kind kind = isa<AddOp>(def)   ? Kind::add
                : isa<SubOp>(def) ? Kind::sub
                : isa<MulOp>(def) ? Kind::mul
                                  : Kind::div;
    expr.nodes.push_back({kind, 0, Value(), x, y});
    return true;
  }
  return false;
}

} // namespace

std::optional<ShapeEntryExpr> ShapeEntryExpr::trace(Value tensor, int64_t i) {
  ShapeEntryExpr expr;
  if (!traceInto(expr, tensor, i, 0))
    return std::nullopt;
  return expr;
}

std::optional<int64_t> ShapeEntryExpr::evaluate(unsigned at) const {
  const Node &node = nodes[at];
  switch (node.kind) {
  case Kind::constant:
    return node.value;
  case Kind::dim: {
    auto type = cast<RankedTensorType>(node.of.getType());
    if (type.isDynamicDim(node.value))
      return std::nullopt;
    return type.getDimSize(node.value);
  }
  default:
    break;
  }
  std::optional<int64_t> x = evaluate(node.lhs);
  std::optional<int64_t> y = x ? evaluate(node.rhs) : std::nullopt;
  if (!y)
    return std::nullopt;
  int64_t r = 0;
  switch (node.kind) {
  case Kind::add:
    return llvm::AddOverflow(*x, *y, r) ? std::nullopt : std::optional<int64_t>(r);
  case Kind::sub:
    return llvm::SubOverflow(*x, *y, r) ? std::nullopt : std::optional<int64_t>(r);
  case Kind::mul:
    return llvm::MulOverflow(*x, *y, r) ? std::nullopt : std::optional<int64_t>(r);
  default:
    // Truncating, as kiln.div on integers.
    if (*y == 0 || (*y == -1 && *x == std::numeric_limits<int64_t>::min()))
      return std::nullopt;
    return *x / *y;
  }
}

std::optional<int64_t> kiln::knownShapeEntry(Value tensor, int64_t i) {
  std::optional<ShapeEntryExpr> expr = ShapeEntryExpr::trace(tensor, i);
  return expr ? expr->evaluate(expr->root()) : std::nullopt;
}
