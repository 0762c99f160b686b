//===- Text.cpp - TfIdfVectorizer over integer tokens ----------------------===//
//
// TfIdfVectorizer counts, per row of token ids (of static or run-time
// length), the occurrences of the
// n-grams of its pool (also as skip-grams: n tokens `d` apart, d from 1 to
// max_skip_count + 1; unigrams once), then weights the counts. The pool is
// an attribute, so every n-gram is a constant: for each n and d, the
// positions where token k of the n-gram matches are compared at once
// ([B, positions, n-grams] per k, anded), summed over positions, and the
// per-n-gram counts moved to their output columns by a 0/1 matmul.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

LogicalResult importTfIdfVectorizer(NodeContext &ctx) {
  if (ctx.hasAttr("pool_strings"))
    return ctx.unsupported("string tokens (pool_strings)");
  Value x = ctx.input(0);
  if (!x)
    return failure();
  RankedTensorType xType = NodeContext::typeOf(x);
  if (!isa<IntegerType>(xType.getElementType()))
    return ctx.invalid("tokens must be int32 or int64");
  int64_t rank = xType.getRank();
  if (rank != 1 && rank != 2)
    return ctx.invalid("the input must be [L] or [B, L]");
  // The row length may be known only at run time: every slice below is
  // bounded from the end of the row.
  int64_t length = xType.getDimSize(rank - 1);
  int64_t minGram = ctx.intAttr("min_gram_length", 0), maxGram = ctx.intAttr("max_gram_length", 0);
  int64_t maxSkip = ctx.intAttr("max_skip_count", 0);
  std::string mode = ctx.stringAttr("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.invalid("mode '" + mode + "' is not TF, IDF or TFIDF");
  if (minGram < 1 || maxGram < minGram || maxSkip < 0)
    return ctx.invalid("needs 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  SmallVector<int64_t> pool = ctx.intsAttr("pool_int64s"), counts = ctx.intsAttr("ngram_counts");
  SmallVector<int64_t> indexes = ctx.intsAttr("ngram_indexes");
  SmallVector<float> weights = ctx.floatsAttr("weights");
  if (indexes.empty())
    return ctx.invalid("needs ngram_indexes");
  int64_t columns = *llvm::max_element(indexes) + 1;
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != columns)
    return ctx.invalid("weights must have one entry per output column");

  Value rows = rank == 1 ? unsqueeze(ctx, x, {0}) : x; // [B, L]
  Type f32 = ctx.b.getF32Type();
  Value total;
  int64_t id = 0; // n-grams numbered across sizes, as ngram_indexes counts them
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t n = static_cast<int64_t>(i) + 1;
    int64_t begin = counts[i];
    int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % n != 0)
      return ctx.invalid("ngram_counts does not split pool_int64s into n-grams");
    int64_t grams = (end - begin) / n;
    if (id + grams > static_cast<int64_t>(indexes.size()))
      return ctx.invalid("ngram_indexes has fewer entries than the pool has n-grams");
    int64_t first = id;
    id += grams;
    if (grams == 0 || n < minGram || n > maxGram)
      continue;
    // Counts of each n-gram of this size: [B, grams].
    Value sizeCounts;
    int64_t distances = n == 1 ? 1 : maxSkip + 1; // unigrams once
    for (int64_t d = 1; d <= distances; ++d) {
      if (!ShapedType::isDynamic(length) && length - (n - 1) * d <= 0)
        break;
      Value match;
      for (int64_t k = 0; k < n; ++k) {
        // Token k of the n-grams starting at every position that fits:
        // [k * d, L - (n - 1 - k) * d) ([B, positions]; empty when none fits).
        int64_t fromEnd = (n - 1 - k) * d;
        Value tokens = ctx.make<SliceOp>(rows, ctx.i64s({0, k * d}),
                                         ctx.i64s({INT64_MAX, fromEnd ? -fromEnd : INT64_MAX}),
                                         ctx.i64s({1, 1}));
        SmallVector<int64_t> column;
        for (int64_t g = 0; g < grams; ++g)
          column.push_back(pool[begin + g * n + k]);
        Value wanted = ctx.cast(ctx.indices(column), xType.getElementType()); // [grams]
        Value eq = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, tokens, {2}), wanted);
        match = match ? ctx.make<AndOp>(match, eq) : eq; // [B, positions, grams]
      }
      Value found = ctx.make<ReduceSumOp>(ctx.cast(match, f32), ctx.i64s({1}),
                                          ctx.b.getBoolAttr(false));
      sizeCounts = sizeCounts ? ctx.make<AddOp>(sizeCounts, found) : found;
    }
    if (!sizeCounts)
      continue;
    // To the output columns: [B, grams] x [grams, columns] of 0/1.
    SmallVector<float> place(grams * columns, 0.0f);
    for (int64_t g = 0; g < grams; ++g) {
      int64_t column = indexes[first + g];
      if (column < 0)
        return ctx.invalid("ngram_indexes has a negative entry");
      place[g * columns + column] = 1.0f;
    }
    Value placement = ctx.constant(DenseElementsAttr::get(
        RankedTensorType::get({grams, columns}, f32), ArrayRef<float>(place)));
    Value placed = numpyMatmul(ctx, sizeCounts, placement);
    total = total ? ctx.make<AddOp>(total, placed) : placed;
  }
  if (!total) {
    // No n-gram of a counted size fits: zeros.
    Value firstToken = ctx.cast(ctx.make<SliceOp>(rows, ctx.i64s({0, 0}), ctx.i64s({INT64_MAX, 1}),
                                                  ctx.i64s({1, 1})),
                                f32); // [B, 1], finite
    total = ctx.make<MulOp>(firstToken, ctx.constant(DenseElementsAttr::get(
                                            RankedTensorType::get({1, columns}, f32), 0.0f)));
  }
  Value weightRow =
      weights.empty() ? Value()
                      : ctx.constant(DenseElementsAttr::get(
                            RankedTensorType::get({columns}, f32), ArrayRef<float>(weights)));
  Value y = total;
  if (mode == "IDF") {
    Value present = compare(ctx, ComparePredicate::gt, total, ctx.scalarLike(total, 0));
    y = ctx.make<SelectOp>(present, weightRow ? weightRow : ctx.scalarLike(total, 1),
                           ctx.scalarLike(total, 0));
  } else if (mode == "TFIDF" && weightRow) {
    y = ctx.make<MulOp>(total, weightRow);
  }
  return ctx.setOutput(0, rank == 1 ? squeeze(ctx, y, {0}) : y);
}

} // namespace

void registerTextOps(OpRegistry &r) {
  constexpr int64_t any = kAnyLaterOpset;
  r.add("TfIdfVectorizer", 9, any, importTfIdfVectorizer);
}

} // namespace kiln::onnx_frontend
