//===- Generator.cpp - ONNX ops that produce constants --------------------===//
//
// Constant, ConstantOfShape, Range, EyeLike and the window functions:
// evaluated at import time into a kiln.constant when their inputs are
// constants, else built from kiln.iota over sizes read at run time.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/TensorData.h"
#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

LogicalResult importConstant(NodeContext &ctx) {
  // Strings: a string constant (ops/Strings.cpp).
  if (const onnx::AttributeProto *a = ctx.attr("value");
      a && a->has_t() && a->t().data_type() == onnx::TensorProto::STRING) {
    std::string error;
    Value v = stringTensorConstant(ctx.b, ctx.loc, a->t(), error);
    if (!v)
      return ctx.invalid("the value has " + error);
    return ctx.setStringOutput(0, ctx.asString(v));
  }
  if (const onnx::AttributeProto *a = ctx.attr("value_string"))
    return ctx.setStringOutput(0, stringConstant(ctx, {a->s()}, {}));
  if (const onnx::AttributeProto *a = ctx.attr("value_strings")) {
    std::vector<std::string> strings(a->strings().begin(), a->strings().end());
    return ctx.setStringOutput(
        0, stringConstant(ctx, strings, {static_cast<int64_t>(strings.size())}));
  }
  if (DenseElementsAttr value = ctx.tensorAttr("value"))
    return ctx.setOutput(0, ctx.constant(value));
  if (ctx.failed())
    return failure();
  auto vector = [&](Type element, int64_t n) {
    return RankedTensorType::get({n}, element);
  };
  if (ctx.hasAttr("value_float"))
    return ctx.setOutput(0, ctx.scalar(ctx.b.getF32Type(),
                                       ctx.floatAttr("value_float", 0)));
  if (ctx.hasAttr("value_int"))
    return ctx.setOutput(0, ctx.scalar(ctx.b.getI64Type(),
                                       ctx.intAttr("value_int", 0)));
  if (ctx.hasAttr("value_floats")) {
    SmallVector<float> v = ctx.floatsAttr("value_floats");
    return ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(
                                vector(ctx.b.getF32Type(), v.size()),
                                ArrayRef<float>(v))));
  }
  if (ctx.hasAttr("value_ints")) {
    SmallVector<int64_t> v = ctx.intsAttr("value_ints");
    return ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(
                                vector(ctx.b.getI64Type(), v.size()),
                                ArrayRef<int64_t>(v))));
  }
  if (ctx.hasAttr("sparse_value"))
    return ctx.unsupported("sparse constants");
  return ctx.invalid("Constant has no value attribute");
}

LogicalResult importConstantOfShape(NodeContext &ctx) {
  bool runtime = !ctx.isKnownInput(0);
  std::optional<SmallVector<int64_t>> shape =
      runtime ? std::optional(SmallVector<int64_t>()) : ctx.intsInput(0, "shape");
  if (!shape)
    return failure();
  for (int64_t d : *shape)
    if (d < 0)
      return ctx.invalid("shape has a negative dim");
  Type element = ctx.b.getF32Type();
  double value = 0;
  if (DenseElementsAttr v = ctx.tensorAttr("value")) {
    if (v.getNumElements() != 1)
      return ctx.invalid("value must hold one element");
    element = v.getElementType();
    value = isa<FloatType>(element)
                ? (*v.getValues<APFloat>().begin()).convertToDouble()
                : static_cast<double>((*v.getValues<APInt>().begin()).getSExtValue());
    if (element.isInteger(1))
      value = (*v.getValues<bool>().begin()) ? 1 : 0;
  }
  if (ctx.failed())
    return failure();
  if (runtime) {
    // Dims read when the model runs: the value broadcast over an iota of
    // that shape.
    Value dims = runtimeInts(ctx, 0);
    RankedTensorType dimsType = NodeContext::typeOf(dims);
    if (!dimsType || dimsType.getRank() != 1 || dimsType.isDynamicDim(0))
      return ctx.unsupported("ConstantOfShape of a shape whose length is known only at run time");
    Value one = ctx.scalar(element, value);
    Value iota = ctx.make<IotaOp>(dims, ctx.i64(0));
    Value all = compare(ctx, ComparePredicate::eq, iota, iota);
    return ctx.setOutput(0, ctx.make<SelectOp>(all, one, one));
  }
  int64_t count = 1;
  for (int64_t d : *shape) {
    if (d > 0 && count > (int64_t(1) << 40) / d)
      return ctx.unsupported("ConstantOfShape of more than 2^40 elements");
    count *= d;
  }
  // A splat, whatever its size: one element is stored.
  auto type = RankedTensorType::get(*shape, element);
  Attribute scalar;
  if (auto f = dyn_cast<FloatType>(element))
    scalar = FloatAttr::get(f, value);
  else if (element.isInteger(1))
    scalar = BoolAttr::get(ctx.context(), value != 0);
  else
    scalar = IntegerAttr::get(element, static_cast<int64_t>(value));
  return ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, scalar)));
}

/// Range with an operand read when the model runs: n = max(ceil((limit -
/// start) / delta), 0) elements start + i * delta.
LogicalResult runtimeRange(NodeContext &ctx) {
  Value start = ctx.input(0), limit = ctx.input(1), delta = ctx.input(2);
  if (!start || !limit || !delta)
    return failure();
  Type element = NodeContext::elementTypeOf(start);
  Type f64 = ctx.b.getF64Type();
  Value span = ctx.make<DivOp>(ctx.make<SubOp>(ctx.cast(limit, f64), ctx.cast(start, f64)),
                               ctx.cast(delta, f64));
  Value count = ctx.make<MaxOp>(ctx.cast(ctx.make<CeilOp>(span), ctx.b.getI64Type()),
                                i64Scalar(ctx, 0));
  Value steps = ctx.cast(iotaOfLength(ctx, asScalar(ctx, count)), element);
  return ctx.setOutput(0, ctx.make<AddOp>(asScalar(ctx, start),
                                          ctx.make<MulOp>(steps, asScalar(ctx, delta))));
}

LogicalResult importRange(NodeContext &ctx) {
  if (!ctx.isKnownInput(0) || !ctx.isKnownInput(1) || !ctx.isKnownInput(2))
    return runtimeRange(ctx);
  Value startValue = ctx.input(0);
  std::optional<SmallVector<double>> start = ctx.floatsInput(0, "start");
  std::optional<SmallVector<double>> limit = ctx.floatsInput(1, "limit");
  std::optional<SmallVector<double>> delta = ctx.floatsInput(2, "delta");
  if (!start || !limit || !delta)
    return failure();
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return ctx.invalid("start, limit and delta must be scalars");
  double s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  if (d == 0)
    return ctx.invalid("delta is zero");
  if (!std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d) ||
      std::abs((l - s) / d) > 9.0e18)
    return ctx.invalid("start, limit and delta must be finite and give a "
                       "countable range");
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((l - s) / d)));
  auto type = RankedTensorType::get({count}, NodeContext::elementTypeOf(startValue));
  return ctx.setOutput(0, generateConstant(ctx, type, [&](int64_t i) {
                         return s + static_cast<double>(i) * d;
                       }));
}

LogicalResult importEyeLike(NodeContext &ctx) {
  RankedTensorType type = NodeContext::typeOf(ctx.input(0));
  if (!type)
    return failure();
  if (type.getRank() != 2)
    return ctx.invalid("EyeLike's input must be a matrix");
  Type element = type.getElementType();
  if (ctx.hasAttr("dtype")) {
    element = elementTypeOf(ctx.context(), ctx.intAttr("dtype", 1));
    if (!element)
      return ctx.unsupported("dtype " + dataTypeName(ctx.intAttr("dtype", 1)));
  }
  int64_t k = ctx.intAttr("k", 0), cols = type.getDimSize(1);
  if (!type.hasStaticShape()) {
    // Ones where j - i == k, over dims read when the model runs.
    Value diagonal = ctx.make<SubOp>(iotaOfDim(ctx, ctx.input(0), 1, 2, 1),
                                     iotaOfDim(ctx, ctx.input(0), 0, 2, 0));
    return ctx.setOutput(0, ctx.cast(compare(ctx, ComparePredicate::eq, diagonal,
                                             i64Scalar(ctx, k)),
                                     element));
  }
  return ctx.setOutput(0, generateConstant(ctx, type.clone(element), [&](int64_t flat) {
                         return (flat % cols) - (flat / cols) == k ? 1.0 : 0.0;
                       }));
}

enum class WindowKind { Hann, Hamming, Blackman };

template <WindowKind kind> LogicalResult importWindow(NodeContext &ctx) {
  if (!ctx.isKnownInput(0)) {
    // A size read when the model runs: the formula over an iota.
    Type element = elementTypeOf(ctx.context(), ctx.intAttr("output_datatype", 1));
    if (!element)
      return ctx.unsupported("output_datatype");
    Value n = asScalar(ctx, runtimeInts(ctx, 0));
    Type f64 = ctx.b.getF64Type();
    Value denominator = ctx.cast(ctx.intAttr("periodic", 1) != 0
                                     ? n
                                     : ctx.make<SubOp>(n, i64Scalar(ctx, 1)),
                                 f64);
    Value x = ctx.make<DivOp>(
        ctx.make<MulOp>(ctx.cast(iotaOfLength(ctx, n), f64), ctx.scalar(f64, 2 * M_PI)),
        denominator);
    auto c = [&](double v) { return ctx.scalar(f64, v); };
    Value w;
    switch (kind) {
    case WindowKind::Hann:
      w = ctx.make<SubOp>(c(0.5), ctx.make<MulOp>(c(0.5), ctx.make<CosOp>(x)));
      break;
    case WindowKind::Hamming:
      w = ctx.make<SubOp>(c(25.0 / 46.0), ctx.make<MulOp>(c(21.0 / 46.0), ctx.make<CosOp>(x)));
      break;
    case WindowKind::Blackman:
      w = ctx.make<AddOp>(
          ctx.make<SubOp>(c(0.42), ctx.make<MulOp>(c(0.5), ctx.make<CosOp>(x))),
          ctx.make<MulOp>(c(0.08), ctx.make<CosOp>(ctx.make<MulOp>(x, c(2.0)))));
      break;
    }
    return ctx.setOutput(0, ctx.cast(w, element));
  }
  std::optional<SmallVector<int64_t>> size = ctx.intsInput(0, "size");
  if (!size)
    return failure();
  if (size->size() != 1 || (*size)[0] < 0)
    return ctx.invalid("size must be one non-negative value");
  int64_t n = (*size)[0];
  Type element = elementTypeOf(ctx.context(), ctx.intAttr("output_datatype", 1));
  if (!element)
    return ctx.unsupported("output_datatype");
  // Periodic windows divide by n, symmetric ones by n - 1.
  double denominator = ctx.intAttr("periodic", 1) != 0 ? n : n - 1;
  auto type = RankedTensorType::get({n}, element);
  return ctx.setOutput(0, generateConstant(ctx, type, [&](int64_t i) {
                         double x = 2 * M_PI * i / denominator;
                         switch (kind) {
                         case WindowKind::Hann:
                           return 0.5 - 0.5 * std::cos(x);
                         case WindowKind::Hamming:
                           return 25.0 / 46.0 - (21.0 / 46.0) * std::cos(x);
                         case WindowKind::Blackman:
                           return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
                         }
                         return 0.0;
                       }));
}

} // namespace

void registerGeneratorOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("Constant", 1, any, importConstant);
  r.add("ConstantOfShape", 9, any, importConstantOfShape);
  r.add("Range", 11, any, importRange);
  r.add("EyeLike", 9, any, importEyeLike);
  r.add("HannWindow", 17, any, importWindow<WindowKind::Hann>);
  r.add("HammingWindow", 17, any, importWindow<WindowKind::Hamming>);
  r.add("BlackmanWindow", 17, any, importWindow<WindowKind::Blackman>);
}

} // namespace kiln::onnx_frontend
