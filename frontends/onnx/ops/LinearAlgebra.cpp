//===- LinearAlgebra.cpp - ONNX Einsum and Det -----------------------------===//
//
// Einsum of two operands whose letters are batch, row, column and
// contracted indices is one batched matmul; otherwise it lines every
// operand up on one index space (transpose, then reshape with 1s for the
// indices it lacks), multiplies them with broadcasting and sums the
// contracted indices away; an ellipsis becomes
// spare letters, a letter repeated in one term a gathered diagonal. Det expands the
// Leibniz formula for static matrices up to 4 x 4.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// `v` with the dims at `first` < `second` (equal, static sizes) replaced
/// by their diagonal, as a last dim: [.., n, .., n, ..] -> [.., .., n].
Value diagonal(NodeContext &ctx, Value v, int64_t first, int64_t second) {
  int64_t rank = NodeContext::rankOf(v);
  std::optional<int64_t> n = staticDim(ctx, v, first, "an Einsum diagonal");
  if (!n)
    return {};
  SmallVector<int64_t> perm, shape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != first && d != second) {
      perm.push_back(d);
      shape.push_back(0);
    }
  perm.append({first, second});
  shape.push_back(*n * *n);
  Value flat = ctx.make<ReshapeOp>(ctx.make<TransposeOp>(v, ctx.i64s(perm)), ctx.i64s(shape));
  SmallVector<int64_t> index;
  for (int64_t i = 0; i < *n; ++i)
    index.push_back(i * (*n + 1));
  return ctx.make<GatherOp>(flat, ctx.indices(index), ctx.i64(rank - 2));
}

/// The letters of a two-operand Einsum "a,b->out" by role, in the order
/// they appear in `a` (batch, rows, contracted) and `b` (cols).
struct EinsumRoles {
  std::string batch, rows, cols, contracted;
};

/// Roles where every letter is a batch index (both operands and the
/// output), a row (the first and the output), a column (the second and the
/// output) or a contracted index (both operands only), with no letter twice
/// in a term; nullopt for any other equation.
std::optional<EinsumRoles> einsumRoles(const std::string &a, const std::string &b,
                                       const std::string &out) {
  auto has = [](const std::string &t, char c) { return t.find(c) != std::string::npos; };
  for (const std::string *t : {&a, &b, &out})
    for (char c : *t)
      if (std::count(t->begin(), t->end(), c) != 1)
        return std::nullopt;
  EinsumRoles roles;
  for (char c : a) {
    if (has(b, c))
      (has(out, c) ? roles.batch : roles.contracted) += c;
    else if (has(out, c))
      roles.rows += c;
    else
      return std::nullopt;
  }
  for (char c : b)
    if (!has(a, c)) {
      if (!has(out, c))
        return std::nullopt;
      roles.cols += c;
    }
  if (out.size() != roles.batch.size() + roles.rows.size() + roles.cols.size())
    return std::nullopt;
  return roles;
}

/// A two-operand Einsum of the form einsumRoles accepts: one batched
/// kiln.matmul (attention's "bhid,bhjd->bhij" and "bhij,bhjd->bhid"),
/// where the general form multiplies into the whole index space before
/// summing (maxvit_t spent 5 ms on each such product). Null where the
/// equation is not of that form or its groups of dims need more than one
/// size inferred at run time.
Value einsumAsMatmul(NodeContext &ctx, const std::string &a, const std::string &b,
                     const std::string &out, Value x, Value y) {
  if (!isa<FloatType>(NodeContext::elementTypeOf(x)))
    return {};
  std::optional<EinsumRoles> roles = einsumRoles(a, b, out);
  if (!roles)
    return {};
  const std::string &batch = roles->batch, &rows = roles->rows, &cols = roles->cols,
                    &contracted = roles->contracted;
  auto has = [](const std::string &t, char c) { return t.find(c) != std::string::npos; };
  RankedTensorType xt = NodeContext::typeOf(x), yt = NodeContext::typeOf(y);
  auto dimOf = [&](char c) {
    return has(a, c) ? xt.getDimSize(static_cast<int64_t>(a.find(c)))
                     : yt.getDimSize(static_cast<int64_t>(b.find(c)));
  };
  for (char c : batch + contracted)
    if (xt.getDimSize(static_cast<int64_t>(a.find(c))) !=
        yt.getDimSize(static_cast<int64_t>(b.find(c))))
      return {};
  // A reshape target: `copies` leading dims copied (0), then each group's
  // size (-1 for the one known only at run time; a second such one, or an
  // empty dim that reads as a copy, is left to the general form).
  auto target = [&](size_t copies,
                    ArrayRef<std::string> groups) -> std::optional<SmallVector<int64_t>> {
    SmallVector<int64_t> shape(copies, 0);
    int64_t inferred = 0;
    for (const std::string &group : groups) {
      int64_t size = 1;
      for (char c : group) {
        int64_t d = dimOf(c);
        if (d == 0)
          return std::nullopt;
        size = ShapedType::isDynamic(d) || size < 0 ? -1 : size * d;
      }
      inferred += size < 0;
      shape.push_back(size);
    }
    if (inferred > 1)
      return std::nullopt;
    return shape;
  };
  SmallVector<std::string> rowsCols, every;
  for (char c : rows + cols)
    rowsCols.push_back(std::string(1, c));
  for (char c : batch + rows + cols)
    every.push_back(std::string(1, c));
  // Several batch dims become one where the result reshapes back (oneDNN
  // takes matmuls up to rank 4; maxvit_t's are [B, G, H, I, J]).
  std::optional<SmallVector<int64_t>> left = target(0, {batch, rows, contracted}),
                                      right = target(0, {batch, contracted, cols}),
                                      result = target(0, every);
  bool flat = batch.size() > 2 && left && right && result;
  if (!flat) {
    left = target(batch.size(), {rows, contracted});
    right = target(batch.size(), {contracted, cols});
    result = target(batch.size(), rowsCols);
  }
  // Groups of one letter each need no reshape.
  bool single = !flat && rows.size() == 1 && cols.size() == 1 && contracted.size() == 1;
  if (!single && (!left || !right || !result))
    return {};
  // An operand as [batch..., inner, outer]: transposed to that order, its
  // groups reshaped. Flattening batch dims that lead the operand comes
  // first (free), so that a transpose of the last two stays one the
  // library call reads in place.
  auto arrange = [&](Value v, const std::string &term, const std::string &inner,
                     const std::string &outer,
                     const std::optional<SmallVector<int64_t>> &shape) -> Value {
    std::string order = batch + inner + outer;
    if (flat && StringRef(term).starts_with(batch)) {
      std::string rest = term.substr(batch.size());
      SmallVector<std::string> groups = {batch};
      for (char c : rest)
        groups.push_back(std::string(1, c));
      if (std::optional<SmallVector<int64_t>> first = target(0, groups)) {
        std::string flatTerm = "#" + rest, flatOrder = "#" + inner + outer;
        SmallVector<int64_t> perm;
        for (char c : flatOrder)
          perm.push_back(static_cast<int64_t>(flatTerm.find(c)));
        Value moved = ctx.make<TransposeOp>(ctx.make<ReshapeOp>(v, ctx.i64s(*first)),
                                            ctx.i64s(perm));
        if (inner.size() == 1 && outer.size() == 1)
          return moved;
        if (std::optional<SmallVector<int64_t>> grouped = target(1, {inner, outer}))
          return ctx.make<ReshapeOp>(moved, ctx.i64s(*grouped));
      }
    }
    SmallVector<int64_t> perm;
    for (char c : order)
      perm.push_back(static_cast<int64_t>(term.find(c)));
    Value moved = ctx.make<TransposeOp>(v, ctx.i64s(perm));
    return single ? moved : ctx.make<ReshapeOp>(moved, ctx.i64s(*shape));
  };
  Value product = ctx.make<MatmulOp>(arrange(x, a, rows, contracted, left),
                                     arrange(y, b, contracted, cols, right));
  // [batch..., M, N] -> [batch..., rows..., cols...] -> the output's order.
  if (!single)
    product = ctx.make<ReshapeOp>(product, ctx.i64s(*result));
  std::string produced = batch + rows + cols;
  SmallVector<int64_t> perm;
  for (char c : out)
    perm.push_back(static_cast<int64_t>(produced.find(c)));
  return ctx.make<TransposeOp>(product, ctx.i64s(perm));
}

LogicalResult importEinsum(NodeContext &ctx) {
  std::string equation = ctx.stringAttr("equation", "");
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  // An ellipsis stands for the same leading letters in every term (numpy
  // aligns them from the right; a shorter one takes the last of them).
  if (equation.find("...") != std::string::npos) {
    std::string spare;
    for (char c = 'A'; c <= 'Z'; ++c)
      if (equation.find(c) == std::string::npos)
        spare += c;
    size_t arrowAt = equation.find("->");
    llvm::SmallVector<StringRef> operands;
    StringRef(equation).substr(0, arrowAt).split(operands, ',');
    int64_t widest = 0;
    SmallVector<int64_t> widths;
    for (auto [i, term] : llvm::enumerate(operands)) {
      int64_t named = static_cast<int64_t>(term.size()) - (term.contains("...") ? 3 : 0);
      int64_t width = i < ctx.numInputs() && term.contains("...")
                          ? NodeContext::rankOf(ctx.optionalInput(i)) - named
                          : 0;
      if (width < 0)
        return ctx.invalid("operand " + llvm::Twine(i) + " has fewer dims than its term names");
      widths.push_back(width);
      widest = std::max(widest, width);
    }
    if (widest > static_cast<int64_t>(spare.size()))
      return ctx.unsupported("Einsum with an ellipsis of " + llvm::Twine(widest) + " dims");
    std::string expanded;
    for (auto [i, term] : llvm::enumerate(operands)) {
      std::string t = term.str();
      size_t at = t.find("...");
      if (at != std::string::npos)
        t.replace(at, 3, spare.substr(widest - widths[i], widths[i]));
      expanded += (i ? "," : "") + t;
    }
    std::string out = arrowAt == std::string::npos ? "" : equation.substr(arrowAt + 2);
    size_t at = out.find("...");
    if (at != std::string::npos)
      out.replace(at, 3, spare.substr(0, widest));
    else if (arrowAt == std::string::npos) {
      // Implicit output: the ellipsis dims, then the letters named once.
      std::map<char, int> seen;
      for (char c : expanded)
        if (std::isalpha(static_cast<unsigned char>(c)) &&
            spare.substr(0, widest).find(c) == std::string::npos)
          ++seen[c];
      out = spare.substr(0, widest);
      for (auto [c, n] : seen)
        if (n == 1)
          out += c;
    }
    equation = expanded + "->" + out;
  }
  std::string lhs = equation, output;
  size_t arrow = equation.find("->");
  bool explicitOutput = arrow != std::string::npos;
  if (explicitOutput) {
    lhs = equation.substr(0, arrow);
    output = equation.substr(arrow + 2);
  }
  SmallVector<std::string> terms;
  llvm::SmallVector<StringRef> pieces;
  StringRef(lhs).split(pieces, ',');
  for (StringRef p : pieces)
    terms.push_back(p.str());
  if (terms.size() != ctx.numInputs())
    return ctx.invalid("the equation names " + llvm::Twine(terms.size()) +
                       " operands but the node has " + llvm::Twine(ctx.numInputs()));
  std::map<char, int> counts;
  for (const std::string &t : terms) {
    for (char c : t) {
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return ctx.invalid("bad character in equation '" + equation + "'");
      ++counts[c];
    }
  }
  if (!explicitOutput)
    for (auto [c, n] : counts)
      if (n == 1)
        output += c;
  if (terms.size() == 2) {
    Value x = ctx.input(0), y = ctx.input(1);
    if (!x || !y)
      return failure();
    if (static_cast<int64_t>(terms[0].size()) == NodeContext::rankOf(x) &&
        static_cast<int64_t>(terms[1].size()) == NodeContext::rankOf(y))
      if (Value product = einsumAsMatmul(ctx, terms[0], terms[1], output, x, y))
        return ctx.setOutput(0, product);
  }
  // The index space: output indices first, then contracted ones.
  std::string space = output;
  for (auto [c, n] : counts)
    if (output.find(c) == std::string::npos)
      space += c;
  Value product;
  for (auto [i, original] : llvm::enumerate(terms)) {
    std::string term = original;
    Value v = ctx.input(i);
    if (!v)
      return failure();
    if (static_cast<int64_t>(term.size()) != NodeContext::rankOf(v))
      return ctx.invalid("operand " + llvm::Twine(i) + " has rank " +
                         llvm::Twine(NodeContext::rankOf(v)) + " but the equation gives it " +
                         llvm::Twine(term.size()) + " indices");
    // A letter twice in one term takes the diagonal (it then names the
    // last dim).
    for (size_t first = 0; first < term.size(); ++first) {
      size_t second = term.find(term[first], first + 1);
      if (second == std::string::npos)
        continue;
      char c = term[first];
      v = diagonal(ctx, v, first, second);
      if (!v)
        return failure();
      term.erase(second, 1);
      term.erase(first, 1);
      term += c;
      first = static_cast<size_t>(-1); // rescan
    }
    SmallVector<int64_t> perm, missing;
    for (size_t s = 0; s < space.size(); ++s) {
      size_t at = term.find(space[s]);
      if (at == std::string::npos)
        missing.push_back(s);
      else
        perm.push_back(at);
    }
    Value aligned = ctx.make<TransposeOp>(v, ctx.i64s(perm));
    aligned = missing.empty() ? aligned : unsqueeze(ctx, aligned, missing);
    product = product ? ctx.make<MulOp>(product, aligned) : aligned;
  }
  SmallVector<int64_t> contracted;
  for (size_t s = output.size(); s < space.size(); ++s)
    contracted.push_back(s);
  Value result = contracted.empty()
                     ? product
                     : ctx.make<ReduceSumOp>(product, ctx.i64s(contracted),
                                             ctx.b.getBoolAttr(false));
  return ctx.setOutput(0, result);
}

LogicalResult importDet(NodeContext &ctx) {
  Value x = ctx.input(0);
  RankedTensorType type = NodeContext::typeOf(x);
  if (!type)
    return failure();
  int64_t rank = type.getRank();
  if (rank < 2)
    return ctx.invalid("input must have rank >= 2");
  std::optional<int64_t> n = staticDim(ctx, x, rank - 1, "Det");
  if (!n)
    return failure();
  if (type.isDynamicDim(rank - 2)) {
    // Rows known only at run time: n of them, checked when the model runs.
    SmallVector<int64_t> square(rank - 2, 0);
    square.append({*n, *n});
    x = ctx.make<ReshapeOp>(x, ctx.i64s(square));
  } else if (type.getDimSize(rank - 2) != *n) {
    return ctx.invalid("matrices must be square");
  }
  if (*n > 4)
    return ctx.unsupported("Det of matrices larger than 4 x 4");
  SmallVector<int64_t> batch(type.getShape().drop_back(2));
  SmallVector<int64_t> batchSpec;
  for (size_t d = 0; d < batch.size(); ++d)
    batchSpec.push_back(0);
  auto element = [&](int64_t i, int64_t j) {
    SmallVector<int64_t> starts(rank, 0), ends(rank, INT64_MAX), steps(rank, 1);
    starts[rank - 2] = i;
    ends[rank - 2] = i + 1;
    starts[rank - 1] = j;
    ends[rank - 1] = j + 1;
    Value e = ctx.make<SliceOp>(x, ctx.i64s(starts), ctx.i64s(ends), ctx.i64s(steps));
    return ctx.make<ReshapeOp>(e, ctx.i64s(batchSpec));
  };
  SmallVector<int64_t> perm(*n);
  for (int64_t i = 0; i < *n; ++i)
    perm[i] = i;
  Value det;
  do {
    int64_t inversions = 0;
    for (int64_t i = 0; i < *n; ++i)
      for (int64_t j = i + 1; j < *n; ++j)
        inversions += perm[i] > perm[j];
    Value term = element(0, perm[0]);
    for (int64_t i = 1; i < *n; ++i)
      term = ctx.make<MulOp>(term, element(i, perm[i]));
    if (!det)
      det = inversions % 2 ? ctx.make<NegOp>(term) : term;
    else
      det = inversions % 2 ? ctx.make<SubOp>(det, term) : ctx.make<AddOp>(det, term);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return ctx.setOutput(0, det);
}

} // namespace

void registerLinearAlgebraOps(OpRegistry &r) {
  r.add("Einsum", 12, kAnyLaterOpset, importEinsum);
  r.add("Det", 11, kAnyLaterOpset, importDet);
}

} // namespace kiln::onnx_frontend
