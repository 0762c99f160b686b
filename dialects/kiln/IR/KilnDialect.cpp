//===- KilnDialect.cpp - dialect registration and shared helpers ----------===//
//
// Registers the ops, materialises folded constants, and holds the type
// helpers shared by every op family's shape inference.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"
#include "dialects/kiln/Utils/ShapeMath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;

static_assert(shape::kDynamic == ShapedType::kDynamic,
              "ShapeMath and MLIR must agree on the dynamic-dim marker");

#include "dialects/kiln/IR/KilnDialect.cpp.inc"
#include "dialects/kiln/IR/KilnEnums.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/IR/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

bool kiln::areCompatibleResultTypes(TypeRange lhs, TypeRange rhs) {
  if (lhs.size() != rhs.size())
    return false;
  for (auto [l, r] : llvm::zip(lhs, rhs)) {
    auto lt = dyn_cast<RankedTensorType>(l);
    auto rt = dyn_cast<RankedTensorType>(r);
    if (!lt || !rt)
      return l == r;
    if (lt.getElementType() != rt.getElementType() ||
        failed(verifyCompatibleShape(lt.getShape(), rt.getShape())))
      return false;
  }
  return true;
}

LogicalResult kiln::inferBroadcastResult(std::optional<Location> loc,
                                         ArrayRef<Type> operands,
                                         Type elementType,
                                         SmallVectorImpl<Type> &out) {
  std::vector<shape::Dims> shapes;
  for (Type t : operands) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked)
      return emitOptionalError(loc, "expected ranked tensor operands");
    shapes.emplace_back(ranked.getShape().begin(), ranked.getShape().end());
  }
  shape::ShapeOrError result = shape::broadcast(shapes);
  if (!result.ok())
    return emitOptionalError(loc, result.error);
  out.push_back(RankedTensorType::get(result.dims, elementType));
  return success();
}

LogicalResult kiln::inferReduceResult(std::optional<Location> loc, Type input,
                                      ArrayRef<int64_t> axes, bool keepDims,
                                      Type elementType,
                                      SmallVectorImpl<Type> &out) {
  auto ranked = dyn_cast<RankedTensorType>(input);
  if (!ranked)
    return emitOptionalError(loc, "expected a ranked tensor operand");
  int64_t rank = ranked.getRank();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return emitOptionalError(loc, "axis ", axes[i],
                               " is out of range for rank ", rank);
    if (i > 0 && axes[i] <= axes[i - 1])
      return emitOptionalError(loc, "axes must be sorted and unique");
  }
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      dims.push_back(ranked.getDimSize(d));
    else if (keepDims)
      dims.push_back(1);
  }
  out.push_back(RankedTensorType::get(dims, elementType));
  return success();
}
