//===- HostShapes.cpp - shape entries computed on the host ----------------===//
//
// An op whose result dims are the entries of a small integer tensor
// (kiln.iota, kiln.dynamic_reshape) takes each dynamic one from the dims
// it is computed from (ShapeEntryExpr, emitted as index arithmetic), and
// reads the tensor only where the entry is not so computed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KilnToLinalg.h"
#include "dialects/kiln/IR/ShapeEntries.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln::lowering {

Value hostEntry(OpBuilder &b, Location loc, Value tensor, int64_t i) {
  std::optional<ShapeEntryExpr> expr = ShapeEntryExpr::trace(tensor, i);
  if (!expr)
    return nullptr;
  using Kind = ShapeEntryExpr::Kind;
  // Truncating, as kiln.div on integers. A divisor not known when
  // compiling, or 0, leaves the entry to the device (whose kiln.div
  // defines it); checked before anything is emitted.
  for (const ShapeEntryExpr::Node &node : expr->nodes) {
    if (node.kind != Kind::div)
      continue;
    std::optional<int64_t> divisor = expr->evaluate(node.rhs);
    if (!divisor || *divisor == 0)
      return nullptr;
  }
  SmallVector<Value> values;
  for (const ShapeEntryExpr::Node &node : expr->nodes) {
    if (node.kind == Kind::constant) {
      values.push_back(arith::ConstantIndexOp::create(b, loc, node.value));
      continue;
    }
    if (node.kind == Kind::dim) {
      values.push_back(dimOf(b, loc, node.of, node.value));
      continue;
    }
    Value x = values[node.lhs], y = values[node.rhs];
    switch (node.kind) {
    case Kind::add:
      values.push_back(arith::AddIOp::create(b, loc, x, y));
      break;
    case Kind::sub:
      values.push_back(arith::SubIOp::create(b, loc, x, y));
      break;
    case Kind::mul:
      values.push_back(arith::MulIOp::create(b, loc, x, y));
      break;
    default:
      values.push_back(arith::DivSIOp::create(b, loc, x, y));
      break;
    }
  }
  return values.back();
}

Value extractIndex(OpBuilder &b, Location loc, Value tensor, int64_t i) {
  if (Value entry = hostEntry(b, loc, tensor, i))
    return entry;
  Value at = arith::ConstantIndexOp::create(b, loc, i);
  Value v = tensor::ExtractOp::create(b, loc, tensor, ValueRange{at});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

SmallVector<Value> runtimeSizes(OpBuilder &b, Location loc, RankedTensorType type, Value shape) {
  SmallVector<Value> sizes;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size = extractIndex(b, loc, shape, d);
    checkAtRunTime(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, zero),
                   kNegativeSize);
    sizes.push_back(size);
  }
  return sizes;
}

} // namespace kiln::lowering
