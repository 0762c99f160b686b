//===- SymbolicShapes.cpp - shape arithmetic on dynamic dims --------------===//

#include "frontends/onnx/SymbolicShapes.h"
#include "dialects/kiln/Utils/ShapeMath.h"
#include "frontends/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {

bool SymbolicInts::fullyKnown() const {
  return llvm::all_of(values, [](const std::optional<int64_t> &v) { return v.has_value(); });
}

llvm::SmallVector<int64_t> SymbolicInts::shape() const {
  if (!dims.empty())
    return dims;
  if (scalar)
    return {};
  return {static_cast<int64_t>(values.size())};
}

bool isSymbolicArithmetic(llvm::StringRef opType) {
  return llvm::is_contained({"Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Mul", "Div",
                             "Add", "Sub", "Mod", "Max", "Min", "Slice", "Identity", "Shape",
                             "Equal", "Where", "Transpose"},
                            opType);
}

namespace {

using Element = std::optional<int64_t>;

/// Elementwise arithmetic with scalar broadcasting; unknown in, unknown out.
std::optional<SymbolicInts> binary(const SymbolicInts &a, const SymbolicInts &b,
                                   llvm::function_ref<Element(int64_t, int64_t)> f) {
  size_t n = std::max(a.values.size(), b.values.size());
  if ((a.values.size() != n && a.values.size() != 1) ||
      (b.values.size() != n && b.values.size() != 1))
    return std::nullopt;
  SymbolicInts out;
  out.scalar = a.scalar && b.scalar;
  for (size_t i = 0; i < n; ++i) {
    Element x = a.values[a.values.size() == 1 ? 0 : i];
    Element y = b.values[b.values.size() == 1 ? 0 : i];
    out.values.push_back(x && y ? f(*x, *y) : std::nullopt);
  }
  return out;
}

/// The elements of `x` at the offsets picks[0][i0] + ... + picks[n][in],
/// for every (i0, ..., in) in row-major order.
void appendSelected(const SymbolicInts &x, llvm::ArrayRef<llvm::SmallVector<int64_t>> picks,
                    SymbolicInts &out) {
  llvm::SmallVector<int64_t> offsets = {0};
  for (const llvm::SmallVector<int64_t> &p : picks) {
    llvm::SmallVector<int64_t> next;
    for (int64_t base : offsets)
      for (int64_t i : p)
        next.push_back(base + i);
    offsets = std::move(next);
  }
  for (int64_t offset : offsets)
    out.values.push_back(x.values[offset]);
}

/// Slice (opset 10 and later: starts, ends, axes and steps are inputs).
LogicalResult slice(NodeContext &ctx, const SymbolicInts &x, SymbolicInts &out) {
  std::optional<llvm::SmallVector<int64_t>> starts = ctx.intsInput(1, "starts"),
                                            ends = ctx.intsInput(2, "ends");
  if (!starts || !ends)
    return failure();
  if (x.scalar)
    return ctx.invalid("Slice of a scalar");
  llvm::SmallVector<int64_t> shape = x.shape();
  int64_t rank = static_cast<int64_t>(shape.size());
  llvm::SmallVector<int64_t> axes, steps(starts->size(), 1);
  for (int64_t a = 0; a < static_cast<int64_t>(starts->size()); ++a)
    axes.push_back(a);
  if (ctx.hasInput(3)) {
    std::optional<llvm::SmallVector<int64_t>> given = ctx.intsInput(3, "axes");
    if (!given)
      return failure();
    axes = *given;
  }
  if (ctx.hasInput(4)) {
    std::optional<llvm::SmallVector<int64_t>> given = ctx.intsInput(4, "steps");
    if (!given)
      return failure();
    steps = *given;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return ctx.invalid("starts, ends, axes and steps differ in length");
  llvm::SmallVector<llvm::SmallVector<int64_t>> picks(rank);
  for (int64_t d = 0; d < rank; ++d)
    for (int64_t i = 0; i < shape[d]; ++i)
      picks[d].push_back(i);
  for (size_t k = 0; k < axes.size(); ++k) {
    std::optional<int64_t> axis = ctx.normalizeAxis(axes[k], rank);
    if (!axis)
      return failure();
    int64_t n = shape[*axis], step = steps[k], start = (*starts)[k], end = (*ends)[k];
    if (step == 0)
      return ctx.invalid("a step of 0");
    start = start < 0 ? start + n : start;
    end = end < 0 ? end + n : end;
    picks[*axis].clear();
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, n);
      end = std::clamp<int64_t>(end, 0, n);
      for (int64_t i = start; i < end; i += step)
        picks[*axis].push_back(i);
    } else {
      start = std::clamp<int64_t>(start, -1, n - 1);
      end = std::clamp<int64_t>(end, -1, n - 1);
      for (int64_t i = start; i > end; i += step)
        picks[*axis].push_back(i);
    }
  }
  shape::Dims strides = shape::strides(shape::Dims(shape.begin(), shape.end()));
  for (int64_t d = 0; d < rank; ++d) {
    if (rank > 1)
      out.dims.push_back(static_cast<int64_t>(picks[d].size()));
    for (int64_t &i : picks[d])
      i *= strides[d];
  }
  appendSelected(x, picks, out);
  return success();
}

/// Transpose by `perm` (reversed dims when absent).
LogicalResult transpose(NodeContext &ctx, const SymbolicInts &x, SymbolicInts &out) {
  llvm::SmallVector<int64_t> shape = x.shape();
  int64_t rank = static_cast<int64_t>(shape.size());
  llvm::SmallVector<int64_t> perm = ctx.intsAttr("perm");
  if (!ctx.hasAttr("perm"))
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  llvm::SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  bool permutes = static_cast<int64_t>(sorted.size()) == rank;
  for (int64_t d = 0; permutes && d < rank; ++d)
    permutes = sorted[d] == d;
  if (!permutes)
    return ctx.invalid("perm is not a permutation of the input's dims");
  // Output dim d walks input dim perm[d].
  shape::Dims strides = shape::strides(shape::Dims(shape.begin(), shape.end()));
  llvm::SmallVector<int64_t> outDims;
  llvm::SmallVector<llvm::SmallVector<int64_t>> picks;
  for (int64_t d : perm) {
    outDims.push_back(shape[d]);
    picks.emplace_back();
    for (int64_t i = 0; i < shape[d]; ++i)
      picks.back().push_back(i * strides[d]);
  }
  appendSelected(x, picks, out);
  out.scalar = x.scalar;
  if (rank > 1)
    out.dims = outDims;
  return success();
}

LogicalResult evaluate(NodeContext &ctx, SymbolicInts &out) {
  llvm::StringRef op = ctx.opType();
  auto in = [&](size_t i) { return ctx.symbolicInput(i, op); };
  // Past rank 1, only ops that move elements.
  if (op != "Identity" && op != "Cast" && op != "Slice" && op != "Transpose" && op != "Shape")
    for (size_t i = 0; i < ctx.numInputs(); ++i)
      if (ctx.isSymbolic(i)) {
        std::optional<SymbolicInts> x = in(i);
        if (x && !x->dims.empty())
          return ctx.unsupported(op + " of a shape computed at run time of rank " +
                                 llvm::Twine(x->dims.size()));
      }
  if (op == "Slice" || op == "Transpose") {
    std::optional<SymbolicInts> x = in(0);
    if (!x)
      return failure();
    return op == "Slice" ? slice(ctx, *x, out) : transpose(ctx, *x, out);
  }
  if (op == "Identity" || op == "Cast") {
    std::optional<SymbolicInts> x = in(0);
    if (!x)
      return failure();
    out = *x;
    return success();
  }
  if (op == "Mul" || op == "Div" || op == "Add" || op == "Sub" || op == "Mod" || op == "Max" ||
      op == "Min") {
    if (op == "Mod" && ctx.intAttr("fmod", 0) != 0)
      return ctx.unsupported("Mod with fmod = 1 of a shape computed at run time");
    std::optional<SymbolicInts> a = in(0), b = in(1);
    if (!a || !b)
      return failure();
    std::optional<SymbolicInts> r = binary(*a, *b, [&](int64_t x, int64_t y) -> Element {
      if (op == "Mul") return x * y;
      if (op == "Add") return x + y;
      if (op == "Sub") return x - y;
      if (op == "Max") return std::max(x, y);
      if (op == "Min") return std::min(x, y);
      if (op == "Mod") {
        // The divisor's sign, as Python's %.
        if (y == 0) return std::nullopt;
        int64_t m = x % y;
        return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
      }
      if (y == 0) return std::nullopt;
      return x / y; // integer division truncates, as ONNX's Div on ints
    });
    if (!r)
      return ctx.invalid("operand lengths do not broadcast");
    out = *r;
    return success();
  }
  if (op == "Equal") {
    // A dim known only at run time is >= 0: never equal to a negative
    // constant (torch's exporter compares shapes with -1 before Expand).
    std::optional<SymbolicInts> a = in(0), b = in(1);
    if (!a || !b)
      return failure();
    size_t n = std::max(a->values.size(), b->values.size());
    if ((a->values.size() != n && a->values.size() != 1) ||
        (b->values.size() != n && b->values.size() != 1))
      return ctx.invalid("operand lengths do not broadcast");
    out.scalar = a->scalar && b->scalar;
    for (size_t i = 0; i < n; ++i) {
      Element x = a->values[a->values.size() == 1 ? 0 : i];
      Element y = b->values[b->values.size() == 1 ? 0 : i];
      if (x && y)
        out.values.push_back(*x == *y ? 1 : 0);
      else if ((x && *x < 0) || (y && *y < 0))
        out.values.push_back(0);
      else
        out.values.push_back(std::nullopt);
    }
    return success();
  }
  if (op == "Where") {
    std::optional<SymbolicInts> c = in(0), a = in(1), b = in(2);
    if (!c || !a || !b)
      return failure();
    size_t n = std::max({c->values.size(), a->values.size(), b->values.size()});
    for (const SymbolicInts *v : {&*c, &*a, &*b})
      if (v->values.size() != n && v->values.size() != 1)
        return ctx.invalid("operand lengths do not broadcast");
    out.scalar = c->scalar && a->scalar && b->scalar;
    auto at = [&](const SymbolicInts &v, size_t i) { return v.values[v.values.size() == 1 ? 0 : i]; };
    for (size_t i = 0; i < n; ++i) {
      Element cond = at(*c, i), x = at(*a, i), y = at(*b, i);
      out.values.push_back(cond ? (*cond ? x : y) : (x && y && *x == *y ? x : std::nullopt));
    }
    return success();
  }
  if (op == "Shape") {
    // The shape of a shape: its length, known.
    std::optional<SymbolicInts> x = in(0);
    if (!x)
      return failure();
    if (ctx.hasAttr("start") || ctx.hasAttr("end"))
      return ctx.unsupported("Shape with start or end of a run-time shape");
    for (int64_t d : x->shape())
      out.values.push_back(d);
    return success();
  }
  if (op == "Gather") {
    std::optional<SymbolicInts> data = in(0);
    std::optional<llvm::SmallVector<int64_t>> indices = ctx.intsInput(1, "indices");
    if (!data || !indices)
      return failure();
    if (ctx.intAttr("axis", 0) != 0 || data->scalar)
      return ctx.unsupported("Gather from a run-time shape other than along axis 0");
    int64_t n = static_cast<int64_t>(data->values.size());
    for (int64_t i : *indices) {
      if (i < -n || i >= n)
        return ctx.invalid("index " + llvm::Twine(i) + " out of range");
      out.values.push_back(data->values[i < 0 ? i + n : i]);
    }
    out.scalar = NodeContext::rankOf(ctx.input(1)) == 0;
    return success();
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::optional<SymbolicInts> x = in(0);
    if (!x)
      return failure();
    out = *x;
    out.scalar = op == "Squeeze" && x->values.size() == 1;
    if (op == "Unsqueeze" && !x->scalar)
      return ctx.unsupported("Unsqueeze of a run-time shape to rank 2");
    return success();
  }
  if (op == "Concat") {
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      std::optional<SymbolicInts> x = in(i);
      if (!x)
        return failure();
      out.values.append(x->values);
    }
    return success();
  }
  return ctx.unsupported(op + " of a shape computed at run time");
}

} // namespace

LogicalResult evaluateSymbolic(NodeContext &ctx) {
  SymbolicInts out;
  if (failed(evaluate(ctx, out)) || ctx.failed())
    return failure();
  // A comparison known at compile time is a boolean constant.
  if (ctx.opType() == "Equal" && out.fullyKnown()) {
    llvm::SmallVector<bool> bits;
    for (const Element &v : out.values)
      bits.push_back(*v != 0);
    auto type = mlir::RankedTensorType::get(
        out.scalar ? llvm::ArrayRef<int64_t>{} : llvm::ArrayRef<int64_t>{int64_t(bits.size())},
        ctx.b.getI1Type());
    return ctx.setOutput(0, ctx.constant(mlir::DenseElementsAttr::get(type, bits)));
  }
  return ctx.setSymbolicOutput(0, out);
}

} // namespace kiln::onnx_frontend
