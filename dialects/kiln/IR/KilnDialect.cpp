//===- KilnDialect.cpp - dialect registration and shared helpers ----------===//
//
// Registers the ops, materialises folded constants, and holds the type
// helpers shared by every op family's shape inference.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
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
#include "dialects/kiln/IR/KilnInterfaces.cpp.inc"

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

/// Kiln's discardable attributes (KilnDialect.td), wherever they appear.
LogicalResult KilnDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto integer = [&]() -> FailureOr<int64_t> {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitOpError("'") << name << "' must be a non-negative integer";
    return value.getInt();
  };
  if (name == LibraryCallAttrHelper::getNameStr()) {
    if (!isa<KernelOp, ConvOp, MatmulOp, MaxPoolOp, AvgPoolOp, ConcatOp, ReduceMeanOp, MulOp>(op))
      return op->emitOpError("'") << name
                                  << "' belongs on a kiln.kernel, kiln.conv, kiln.matmul, a "
                                     "pool, kiln.concat, kiln.reduce_mean or kiln.mul";
    return integer();
  }
  if (name == LibraryInputsAttrHelper::getNameStr()) {
    FailureOr<int64_t> count = integer();
    if (failed(count))
      return failure();
    if (*count < 1 || *count > op->getNumOperands())
      return op->emitOpError("'") << name << "' counts " << *count << " of "
                                  << op->getNumOperands() << " operands";
    return success();
  }
  if (name == OutputIntoAttrHelper::getNameStr()) {
    if (!isa<KernelOp, ConvOp, LibraryCallOp>(op) ||
        !op->hasAttr(LibraryInputsAttrHelper::getNameStr()))
      return op->emitOpError("'") << name << "' belongs on a claimed convolution or its "
                                             "kiln.library_call";
    return integer();
  }
  if (name == OutputWindowAttrHelper::getNameStr()) {
    auto window = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!isa<KernelOp, ConvOp, MaxPoolOp, AvgPoolOp, LibraryCallOp>(op) ||
        !op->hasAttr(LibraryInputsAttrHelper::getNameStr()))
      return op->emitOpError("'") << name << "' belongs on a claimed convolution or pool, or "
                                             "its kiln.library_call";
    auto result = op->getNumResults() == 1
                      ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                      : nullptr;
    if (!window || !result || window.size() != 4 * (result.getRank() - 2) + 1 ||
        llvm::any_of(window.asArrayRef(), [](int64_t v) { return v < 0; }))
      return op->emitOpError("'") << name << "' must hold an extent, a stride, a low and a high "
                                             "padding (each non-negative) per spatial dim, "
                                             "then the ceil mode";
    int64_t n = window.size() / 4;
    for (int64_t i = 0; i < 2 * n; ++i)
      if (window[i] < 1)
        return op->emitOpError("'") << name << "' has an extent or stride below 1";
    if (window[4 * n] > 1)
      return op->emitOpError("'") << name << "' has a ceil mode other than 0 or 1";
    return success();
  }
  if (name == ResidualOperandAttrHelper::getNameStr()) {
    FailureOr<int64_t> index = integer();
    if (failed(index))
      return failure();
    if (*index >= op->getNumOperands())
      return op->emitOpError("'") << name << "' names operand " << *index << " of "
                                  << op->getNumOperands();
    return success();
  }
  if (name == OuterDimsAttrHelper::getNameStr()) {
    auto kernel = dyn_cast<KernelOp>(op);
    if (!kernel || kernel.getKind() != KernelKind::reduction)
      return op->emitOpError("'") << name << "' belongs on a reduction kiln.kernel";
    FailureOr<int64_t> k = integer();
    if (failed(k))
      return failure();
    for (Type type : kernel.getResultTypes())
      if (*k < 1 || *k > cast<RankedTensorType>(type).getRank())
        return op->emitOpError("'") << name << "' = " << *k << " is outside [1, "
                                    << cast<RankedTensorType>(type).getRank() << "]";
    return success();
  }
  if (name == MemoryPlanAttrHelper::getNameStr()) {
    auto plan = dyn_cast<DictionaryAttr>(attr.getValue());
    if (!plan || !plan.getAs<IntegerAttr>("arena_bytes"))
      return op->emitOpError("'") << name << "' must be a dictionary with arena_bytes";
    return success();
  }
  if (name == ArenaAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError("'") << name << "' must be a unit attribute";
    return success();
  }
  if (name == NameAttrHelper::getNameStr())
    return op->emitOpError("'") << name << "' belongs on a function's arguments and results";
  return op->emitOpError("has an unknown kiln attribute '") << name << "'";
}

/// `kiln.name` on a function argument or result: a string; `kiln.string`:
/// a unit attribute on a tensor of i64 handles.
static LogicalResult verifyValueAttribute(Operation *op, NamedAttribute attr, Type type) {
  if (attr.getName().getValue() == kStringAttr) {
    // A tensor (or, once bufferised, a buffer) of i64 handles.
    auto shaped = dyn_cast_or_null<ShapedType>(type);
    if (!isa<UnitAttr>(attr.getValue()) || (shaped && !shaped.getElementType().isInteger(64)))
      return op->emitOpError("'") << kStringAttr
                                  << "' is a unit attribute on a tensor of i64 handles";
    return success();
  }
  if (attr.getName().getValue() != KilnDialect::NameAttrHelper::getNameStr())
    return op->emitOpError("has an unknown kiln argument or result attribute '")
           << attr.getName().getValue() << "'";
  if (!isa<StringAttr>(attr.getValue()))
    return op->emitOpError("'") << attr.getName().getValue() << "' must be a string";
  return success();
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned region,
                                                    unsigned index, NamedAttribute attr) {
  Type type;
  if (region < op->getNumRegions() && !op->getRegion(region).empty() &&
      index < op->getRegion(region).getNumArguments())
    type = op->getRegion(region).getArgument(index).getType();
  else if (auto func = dyn_cast<FunctionOpInterface>(op); func && index < func.getNumArguments())
    type = func.getArgumentTypes()[index];
  return verifyValueAttribute(op, attr, type);
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned index,
                                                       NamedAttribute attr) {
  Type type;
  if (auto func = dyn_cast<FunctionOpInterface>(op); func && index < func.getNumResults())
    type = func.getResultTypes()[index];
  return verifyValueAttribute(op, attr, type);
}

bool kiln::isLowPrecisionFloat(Type element) {
  return isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type, Float8E5M2FNUZType,
             Float8E8M0FNUType, Float4E2M1FNType>(element);
}

bool kiln::isLowPrecision(Type element) {
  auto i = dyn_cast<IntegerType>(element);
  return isLowPrecisionFloat(element) || (i && (i.getWidth() == 4 || i.getWidth() == 2));
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
