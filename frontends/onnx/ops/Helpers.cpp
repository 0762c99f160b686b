//===- Helpers.cpp - building blocks shared by the op importers -----------===//

#include "frontends/onnx/ops/Helpers.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {

Value broadcastOperand(NodeContext &ctx, size_t i) {
  Value v = ctx.input(i);
  if (!v || i != 1 || ctx.opset >= 7 || ctx.intAttr("broadcast", 0) == 0)
    return v;
  // Legacy broadcasting: B's dims align with A's starting at `axis`
  // (default: B aligns at the trailing dims, as numpy does).
  int64_t rankA = NodeContext::rankOf(ctx.input(0));
  int64_t rankB = NodeContext::rankOf(v);
  if (!ctx.hasAttr("axis"))
    return v;
  std::optional<int64_t> axis =
      ctx.normalizeAxis(ctx.intAttr("axis", 0), rankA);
  if (!axis)
    return {};
  int64_t trailing = rankA - *axis - rankB;
  if (trailing < 0) {
    ctx.invalid("legacy broadcast of rank " + llvm::Twine(rankB) +
                " at axis " + llvm::Twine(*axis) + " overruns rank " +
                llvm::Twine(rankA));
    return {};
  }
  SmallVector<int64_t> axes;
  for (int64_t k = 0; k < trailing; ++k)
    axes.push_back(rankB + k);
  return unsqueeze(ctx, v, axes);
}

Value numpyMatmul(NodeContext &ctx, Value a, Value b) {
  if (!a || !b)
    return {};
  int64_t rankA = NodeContext::rankOf(a), rankB = NodeContext::rankOf(b);
  if (rankA == 0 || rankB == 0) {
    ctx.invalid("matmul operands must not be scalars");
    return {};
  }
  Value lhs = rankA == 1 ? unsqueeze(ctx, a, {0}) : a;
  Value rhs = rankB == 1 ? unsqueeze(ctx, b, {1}) : b;
  Value product = ctx.make<MatmulOp>(lhs, rhs);
  int64_t rank = NodeContext::rankOf(product);
  SmallVector<int64_t> drop;
  if (rankA == 1)
    drop.push_back(rank - 2);
  if (rankB == 1)
    drop.push_back(rank - 1);
  return drop.empty() ? product : squeeze(ctx, product, drop);
}

/// Reshapes `v` to `target`; where `target[j]` is dynamic, `source[j]` is
/// the input dim it carries.
static Value reshapeCarrying(NodeContext &ctx, Value v,
                             ArrayRef<int64_t> target,
                             ArrayRef<int64_t> source) {
  SmallVector<int64_t> spec;
  bool inferredUsed = false;
  for (size_t j = 0; j < target.size(); ++j) {
    if (!ShapedType::isDynamic(target[j])) {
      spec.push_back(target[j]);
    } else if (source[j] == static_cast<int64_t>(j)) {
      spec.push_back(0);
    } else if (!inferredUsed) {
      spec.push_back(-1);
      inferredUsed = true;
    } else {
      // Two dynamic dims move: the target shape read when the model runs
      // (the dims it carries; the static ones as they are).
      SmallVector<Value> dims;
      SmallVector<int64_t> known;
      for (size_t k = 0; k < target.size(); ++k) {
        bool dynamic = ShapedType::isDynamic(target[k]);
        dims.push_back(dynamic ? dimValue(ctx, v, source[k]) : i64Scalar(ctx, target[k]));
        known.push_back(dynamic ? -1 : target[k]);
      }
      return ctx.make<DynamicReshapeOp>(v, concatVector(ctx, dims), ctx.b.getBoolAttr(true),
                                        ctx.i64s(known));
    }
  }
  return ctx.make<ReshapeOp>(v, ctx.i64s(spec));
}

Value unsqueeze(NodeContext &ctx, Value v, ArrayRef<int64_t> axes) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type)
    return {};
  int64_t rank = type.getRank() + axes.size();
  SmallVector<int64_t> target, source;
  int64_t next = 0;
  for (int64_t j = 0; j < rank; ++j) {
    if (llvm::is_contained(axes, j)) {
      target.push_back(1);
      source.push_back(-1);
    } else {
      if (next >= type.getRank())
        break;
      target.push_back(type.getDimSize(next));
      source.push_back(next++);
    }
  }
  if (next != type.getRank() || static_cast<int64_t>(target.size()) != rank) {
    ctx.invalid("unsqueeze axes are out of range");
    return {};
  }
  return reshapeCarrying(ctx, v, target, source);
}

Value squeeze(NodeContext &ctx, Value v, ArrayRef<int64_t> axes) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type)
    return {};
  SmallVector<int64_t> target, source;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (llvm::is_contained(axes, i)) {
      int64_t size = type.getDimSize(i);
      if (!ShapedType::isDynamic(size) && size != 1) {
        ctx.invalid("cannot squeeze dim " + llvm::Twine(i) + " of size " +
                    llvm::Twine(size));
        return {};
      }
      continue;
    }
    target.push_back(type.getDimSize(i));
    source.push_back(i);
  }
  return reshapeCarrying(ctx, v, target, source);
}

std::optional<int64_t> staticDim(NodeContext &ctx, Value v, int64_t d,
                                 StringRef why) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type || d < 0 || d >= type.getRank()) {
    ctx.invalid("dim " + llvm::Twine(d) + " is out of range");
    return std::nullopt;
  }
  if (type.isDynamicDim(d)) {
    ctx.unsupported(why + " needs a static size for dim " + llvm::Twine(d));
    return std::nullopt;
  }
  return type.getDimSize(d);
}

std::optional<Window> readWindow(NodeContext &ctx, Value input,
                                 ArrayRef<int64_t> kernel, bool ceilMode) {
  RankedTensorType type = NodeContext::typeOf(input);
  if (!type)
    return std::nullopt;
  Window w;
  w.kernel = kernel.empty() ? ctx.intsAttr("kernel_shape")
                            : SmallVector<int64_t>(kernel);
  size_t spatial = w.kernel.size();
  if (spatial == 0 || static_cast<int64_t>(spatial) + 2 != type.getRank()) {
    ctx.invalid("kernel has " + llvm::Twine(spatial) +
                " spatial dims but the input has rank " +
                llvm::Twine(type.getRank()));
    return std::nullopt;
  }
  auto orDefault = [&](StringRef name, size_t size, int64_t value) {
    SmallVector<int64_t> v = ctx.intsAttr(name);
    return v.empty() ? SmallVector<int64_t>(size, value) : v;
  };
  w.strides = orDefault("strides", spatial, 1);
  w.dilations = orDefault("dilations", spatial, 1);
  w.pads = orDefault("pads", 2 * spatial, 0);
  if (w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial) {
    ctx.invalid("strides, dilations or pads do not match " +
                llvm::Twine(spatial) + " spatial dims");
    return std::nullopt;
  }
  std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      // At stride 1 the output keeps the input's size, whatever it is: the
      // pads are the kernel's span less one. At other strides they depend
      // on the size.
      int64_t total = span - 1;
      if (w.strides[i] != 1) {
        if (type.isDynamicDim(i + 2)) {
          ctx.unsupported("auto_pad " + autoPad + " at stride " + llvm::Twine(w.strides[i]) +
                          " over dim " + llvm::Twine(i + 2) +
                          ", known only at run time (its pads depend on its size; give it one "
                          "when importing: kiln compile --dim NAME=N)");
          return std::nullopt;
        }
        int64_t in = type.getDimSize(i + 2);
        int64_t out = (in + w.strides[i] - 1) / w.strides[i];
        total = std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      }
      int64_t small = total / 2, large = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (autoPad != "NOTSET" && !autoPad.empty()) {
    ctx.invalid("auto_pad '" + autoPad + "' is not one of NOTSET, VALID, "
                "SAME_UPPER, SAME_LOWER");
    return std::nullopt;
  }
  (void)ceilMode;
  return w;
}

Value compare(NodeContext &ctx, ComparePredicate p, Value a, Value b) {
  return ctx.make<CompareOp>(ComparePredicateAttr::get(ctx.context(), p), a, b);
}

AxisToLast axisToLast(int64_t rank, int64_t axis) {
  AxisToLast p;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      p.toLast.push_back(d);
  p.toLast.push_back(axis);
  p.back.resize(rank);
  for (int64_t d = 0; d < rank; ++d)
    p.back[p.toLast[d]] = d;
  return p;
}

Value iotaAlong(NodeContext &ctx, ArrayRef<int64_t> shape, int64_t d) {
  SmallVector<int64_t> s(shape.size(), 1);
  s[d] = shape[d];
  return generateConstant(ctx, RankedTensorType::get(s, ctx.b.getI64Type()),
                          [](int64_t i) { return static_cast<double>(i); });
}

Value cubicWeight(NodeContext &ctx, Value t, double a) {
  auto c = [&](double v) { return ctx.scalarLike(t, v); };
  auto add = [&](Value x, Value y) { return ctx.make<AddOp>(x, y); };
  auto sub = [&](Value x, Value y) { return ctx.make<SubOp>(x, y); };
  auto mul = [&](Value x, Value y) { return ctx.make<MulOp>(x, y); };
  t = ctx.make<AbsOp>(t);
  Value near = add(mul(mul(sub(mul(c(a + 2), t), c(a + 3)), t), t), c(1));
  Value far = sub(mul(add(mul(sub(mul(c(a), t), c(5 * a)), t), c(8 * a)), t), c(4 * a));
  return ctx.make<SelectOp>(compare(ctx, ComparePredicate::le, t, c(1)), near,
                            ctx.make<SelectOp>(compare(ctx, ComparePredicate::lt, t, c(2)),
                                               far, c(0)));
}

Value zeroPad(NodeContext &ctx, Value v, ArrayRef<int64_t> pads) {
  return ctx.make<PadOp>(v, ctx.i64s(pads),
                         PadModeAttr::get(ctx.context(), PadMode::constant),
                         ctx.b.getF64FloatAttr(0.0));
}

Value generateConstant(NodeContext &ctx, RankedTensorType type,
                       llvm::function_ref<double(int64_t)> fn) {
  if (ctx.failed())
    return {};
  int64_t count = type.getNumElements();
  constexpr int64_t kMaxGenerated = int64_t(1) << 24;
  if (count > kMaxGenerated) {
    ctx.unsupported("a compile-time constant of " + llvm::Twine(count) +
                    " elements (more than " + llvm::Twine(kMaxGenerated) + ")");
    return {};
  }
  Type element = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < count; ++i) {
      APFloat v(fn(i));
      bool lost;
      v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &lost);
      values.push_back(v);
    }
    return ctx.constant(DenseElementsAttr::get(type, values));
  }
  SmallVector<APInt> values;
  unsigned width = element.getIntOrFloatBitWidth();
  for (int64_t i = 0; i < count; ++i)
    values.push_back(APInt(width, static_cast<int64_t>(fn(i)),
                           /*isSigned=*/width > 1, /*implicitTrunc=*/true));
  return ctx.constant(DenseElementsAttr::get(type, values));
}

} // namespace kiln::onnx_frontend

namespace kiln::onnx_frontend {

Value i64Scalar(NodeContext &ctx, int64_t value) { return ctx.scalar(ctx.b.getI64Type(), value); }

Value runtimeInts(NodeContext &ctx, size_t i) {
  Value v = ctx.input(i);
  if (!v)
    return {};
  if (!isa<IntegerType>(NodeContext::elementTypeOf(v))) {
    ctx.invalid("input " + llvm::Twine(i) + " must hold integers");
    return {};
  }
  return NodeContext::elementTypeOf(v).isInteger(64) ? v : ctx.cast(v, ctx.b.getI64Type());
}

Value shapeTensor(NodeContext &ctx, Value v) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type)
    return {};
  if (type.hasStaticShape())
    return ctx.indices(type.getShape());
  return ctx.make<ShapeOfOp>(v);
}

Value asVector(NodeContext &ctx, Value v) {
  if (!v)
    return {};
  return NodeContext::rankOf(v) == 1 ? v : ctx.make<ReshapeOp>(v, ctx.i64s({1}));
}

Value asScalar(NodeContext &ctx, Value v) {
  if (!v)
    return {};
  return NodeContext::rankOf(v) == 0 ? v : ctx.make<ReshapeOp>(v, ctx.i64s({}));
}

Value entryOf(NodeContext &ctx, Value v, int64_t k) {
  return asScalar(ctx, ctx.make<SliceOp>(v, ctx.i64s({k}), ctx.i64s({k + 1}), ctx.i64s({1})));
}

Value dimValue(NodeContext &ctx, Value v, int64_t d) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type)
    return {};
  if (!type.isDynamicDim(d))
    return i64Scalar(ctx, type.getDimSize(d));
  return entryOf(ctx, ctx.make<ShapeOfOp>(v), d);
}

Value iotaOfLength(NodeContext &ctx, Value n) {
  return ctx.make<IotaOp>(asVector(ctx, n), ctx.i64(0));
}

Value iotaOfDim(NodeContext &ctx, Value v, int64_t d, int64_t rank, int64_t at) {
  RankedTensorType type = NodeContext::typeOf(v);
  if (!type)
    return {};
  SmallVector<int64_t> shape(rank, 1);
  if (!type.isDynamicDim(d)) {
    shape[at] = type.getDimSize(d);
    return iotaAlong(ctx, shape, at);
  }
  shape[at] = -1;
  return ctx.make<ReshapeOp>(iotaOfLength(ctx, dimValue(ctx, v, d)), ctx.i64s(shape));
}

SmallVector<Value> dimValues(NodeContext &ctx, Value v) {
  SmallVector<Value> dims;
  for (int64_t d = 0; d < NodeContext::rankOf(v); ++d)
    dims.push_back(dimValue(ctx, v, d));
  return dims;
}

Value reshapeLike(NodeContext &ctx, Value v, Value like) {
  RankedTensorType type = NodeContext::typeOf(like);
  if (!type)
    return {};
  SmallVector<int64_t> spec(type.getShape());
  int64_t dynamic = llvm::count_if(spec, ShapedType::isDynamic);
  // (A 0 in a reshape's spec copies the input's dim: a dim of size 0 goes
  // the dynamic way, which takes sizes as they are.)
  if (dynamic <= 1 && !llvm::is_contained(spec, 0)) {
    for (int64_t &s : spec)
      s = ShapedType::isDynamic(s) ? -1 : s;
    return ctx.make<ReshapeOp>(v, ctx.i64s(spec));
  }
  for (int64_t &s : spec)
    s = ShapedType::isDynamic(s) ? -1 : s;
  return ctx.make<DynamicReshapeOp>(v, ctx.make<ShapeOfOp>(like), ctx.b.getBoolAttr(true),
                                    ctx.i64s(spec));
}

Value selectedPositions(NodeContext &ctx, Value flags) {
  RankedTensorType type = NodeContext::typeOf(flags);
  if (!type)
    return {};
  Value selected = ctx.cast(compare(ctx, ComparePredicate::ne, flags, i64Scalar(ctx, 0)),
                            ctx.b.getI64Type());
  // upTo[i][j] = j <= i; positions along the columns.
  Value rows = iotaOfDim(ctx, flags, 0, 2, 0), columns = iotaOfDim(ctx, flags, 0, 2, 1);
  Value upTo = ctx.cast(compare(ctx, ComparePredicate::le, columns, rows), ctx.b.getI64Type());
  Value running = ctx.make<ReduceSumOp>(ctx.make<MulOp>(upTo, unsqueeze(ctx, selected, {0})),
                                        ctx.i64s({1}), ctx.b.getBoolAttr(false));
  Value count = ctx.make<ReduceSumOp>(selected, ctx.i64s({0}), ctx.b.getBoolAttr(false));
  if (type.isDynamicDim(0)) // the n x n selection, bounded when the model runs
    count = requireAtRunTime(ctx, count,
                             compare(ctx, ComparePredicate::le, dimValue(ctx, flags, 0),
                                     i64Scalar(ctx, kMaxSelected)));
  Value slots = unsqueeze(ctx, ctx.make<AddOp>(iotaOfLength(ctx, count), i64Scalar(ctx, 1)), {1});
  Value hit = ctx.make<AndOp>(
      compare(ctx, ComparePredicate::eq, unsqueeze(ctx, running, {0}), slots),
      compare(ctx, ComparePredicate::ne, unsqueeze(ctx, selected, {0}), i64Scalar(ctx, 0)));
  return ctx.make<ReduceSumOp>(ctx.make<SelectOp>(hit, columns, i64Scalar(ctx, 0)),
                               ctx.i64s({1}), ctx.b.getBoolAttr(false));
}

Value requireAtRunTime(NodeContext &ctx, Value v, Value ok) {
  Value length = ctx.make<SelectOp>(ok, i64Scalar(ctx, 1), i64Scalar(ctx, -1));
  Value zero = ctx.make<ReduceSumOp>(iotaOfLength(ctx, length), ctx.i64s({0}),
                                     ctx.b.getBoolAttr(false));
  return ctx.make<AddOp>(v, zero);
}

SmallVector<Value> splitAtRunTime(NodeContext &ctx, Value x, int64_t axis,
                                  ArrayRef<Value> sizes) {
  if (sizes.empty())
    return {};
  // The sizes must be non-negative and cover the dim (ONNX's rule): checked
  // before the first piece, which every later one's offset depends on.
  Value total = i64Scalar(ctx, 0), nonNegative;
  for (Value size : sizes) {
    total = ctx.make<AddOp>(total, size);
    Value positive = compare(ctx, ComparePredicate::ge, size, i64Scalar(ctx, 0));
    nonNegative = nonNegative ? ctx.make<AndOp>(nonNegative, positive) : positive;
  }
  Value ok = ctx.make<AndOp>(nonNegative,
                             compare(ctx, ComparePredicate::eq, total, dimValue(ctx, x, axis)));
  SmallVector<Value> checked(sizes);
  checked.front() = requireAtRunTime(ctx, checked.front(), ok);
  SmallVector<Value> pieces;
  Value offset = i64Scalar(ctx, 0);
  for (Value size : checked) {
    Value indices = ctx.make<AddOp>(iotaOfLength(ctx, size), offset);
    pieces.push_back(ctx.make<GatherOp>(x, indices, ctx.i64(axis)));
    offset = ctx.make<AddOp>(offset, size);
  }
  return pieces;
}

Value concatVector(NodeContext &ctx, ArrayRef<Value> pieces) {
  SmallVector<Value> vectors;
  for (Value p : pieces)
    vectors.push_back(asVector(ctx, p));
  if (vectors.size() == 1)
    return vectors.front();
  for (Value v : vectors)
    if (!v)
      return {};
  return ctx.make<ConcatOp>(ValueRange(vectors), ctx.i64(0));
}

/// Axes read at run time, made non-negative for rank `rank`.
Value runtimeAxes(NodeContext &ctx, size_t i, int64_t rank) {
  Value axes = runtimeInts(ctx, i);
  if (!axes)
    return {};
  Value negative = compare(ctx, ComparePredicate::lt, axes, i64Scalar(ctx, 0));
  return ctx.make<SelectOp>(negative, ctx.make<AddOp>(axes, i64Scalar(ctx, rank)), axes);
}

/// flags[p] = 1 (i64) where p (of `rank` positions) is one of `axes`.
Value axisFlags(NodeContext &ctx, Value axes, int64_t rank) {
  Value positions = iotaAlong(ctx, {1, rank}, 1);
  Value hit = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, axes, {1}), positions);
  return ctx.make<ReduceMaxOp>(ctx.cast(hit, ctx.b.getI64Type()), ctx.i64s({0}),
                               ctx.b.getBoolAttr(false));
}

/// before[p] = how many of flags[0..p) are set.
Value countBefore(NodeContext &ctx, Value flags, int64_t rank) {
  Value earlier = generateConstant(
      ctx, RankedTensorType::get({rank, rank}, ctx.b.getI64Type()),
      [&](int64_t flat) { return flat / rank < flat % rank ? 1.0 : 0.0; });
  return ctx.make<ReduceSumOp>(ctx.make<MulOp>(unsqueeze(ctx, flags, {1}), earlier),
                               ctx.i64s({0}), ctx.b.getBoolAttr(false));
}

Value squeezeFlagged(NodeContext &ctx, Value v, Value flags, int64_t resultRank) {
  int64_t rank = NodeContext::rankOf(v);
  Value kept = ctx.make<SubOp>(i64Scalar(ctx, 1), flags);
  // Output k takes the input dim p that is kept with k kept dims before it.
  Value slot = ctx.make<SubOp>(iotaAlong(ctx, {rank}, 0), countBefore(ctx, flags, rank));
  Value taken = ctx.make<AndOp>(
      compare(ctx, ComparePredicate::eq, unsqueeze(ctx, slot, {0}),
              iotaAlong(ctx, {resultRank, 1}, 0)),
      compare(ctx, ComparePredicate::ne, unsqueeze(ctx, kept, {0}), i64Scalar(ctx, 0)));
  Value target = ctx.make<ReduceSumOp>(
      ctx.make<MulOp>(ctx.cast(taken, ctx.b.getI64Type()),
                      unsqueeze(ctx, shapeTensor(ctx, v), {0})),
      ctx.i64s({1}), ctx.b.getBoolAttr(false));
  return ctx.make<DynamicReshapeOp>(v, target, ctx.b.getBoolAttr(true),
                                    DenseI64ArrayAttr());
}

std::optional<int64_t> removedAxesCount(NodeContext &ctx, Value x, size_t i) {
  RankedTensorType type = NodeContext::typeOf(x);
  RankedTensorType axesType = NodeContext::typeOf(ctx.input(i));
  if (!type || !axesType)
    return std::nullopt;
  if (axesType.getRank() != 1 || axesType.isDynamicDim(0)) {
    ctx.unsupported("axes of a length known only at run time");
    return std::nullopt;
  }
  if (axesType.getDimSize(0) > type.getRank()) {
    ctx.invalid("more axes than dims");
    return std::nullopt;
  }
  return axesType.getDimSize(0);
}

} // namespace kiln::onnx_frontend
