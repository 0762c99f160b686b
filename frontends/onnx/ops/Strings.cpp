//===- Strings.cpp - string tensors: StringNormalizer, Cast, Equal ---------===//
//
// An ONNX string tensor is a tensor of i64 handles in kiln (the address of
// each NUL-terminated UTF-8 string; KILN_DTYPE_STRING at the artifact's
// boundary). Ops that only move elements move handles like any i64 (the
// graph importer lets those read strings and marks their results); what
// reads or makes characters is `kiln.string`, built here over the tensor
// flattened to one dim.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Helpers.h"

#include "frontends/onnx/ImporterState.h"
#include "frontends/onnx/TensorData.h"

#include "onnx/onnx.pb.h"

using namespace mlir;

namespace kiln::onnx_frontend {

namespace {

/// `kind` of kiln.string over `operands` (of one shape), computed on them
/// flattened to one dim and given back in their shape.
Value stringOp(NodeContext &ctx, llvm::StringRef kind, ArrayRef<Value> operands, Type element) {
  SmallVector<Value> flat;
  for (Value v : operands) {
    if (!v)
      return {};
    flat.push_back(NodeContext::rankOf(v) == 1 ? v : ctx.make<ReshapeOp>(v, ctx.i64s({-1})));
  }
  Value result = ctx.make<StringOp>(ctx.b.getStringAttr(kind), TypeAttr::get(element),
                                    ValueRange(flat));
  if (!result || NodeContext::rankOf(operands[0]) == 1)
    return result;
  return reshapeLike(ctx, result, operands[0]);
}

/// The words, each followed by a NUL byte, as a 1-D i8 constant.
Value wordList(NodeContext &ctx, ArrayRef<std::string> words) {
  std::vector<int8_t> bytes;
  for (const std::string &w : words) {
    bytes.insert(bytes.end(), w.begin(), w.end());
    bytes.push_back(0);
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(bytes.size())}, ctx.b.getI8Type());
  return ctx.constant(DenseElementsAttr::get(type, ArrayRef<int8_t>(bytes)));
}

/// StringNormalizer: the strings of `x` ([C] or [1, C]) that are not
/// stopwords (compared with or without case), then case-changed; when
/// every one is a stopword, one empty string.
LogicalResult importStringNormalizer(NodeContext &ctx) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  if (!ctx.isString(0))
    return ctx.invalid("the input must be a string tensor");
  RankedTensorType type = NodeContext::typeOf(x);
  bool rows = type.getRank() == 2;
  if (type.getRank() != 1 && !(rows && (type.getDimSize(0) == 1 || type.isDynamicDim(0))))
    return ctx.invalid("the input must be [C] or [1, C]");
  std::string action = ctx.stringAttr("case_change_action", "NONE");
  llvm::StringRef kind = action == "LOWER" ? "lower" : action == "UPPER" ? "upper" : "copy";
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.invalid("case_change_action '" + action + "' is not NONE, LOWER or UPPER");
  std::vector<std::string> stopwords;
  if (const onnx::AttributeProto *a = ctx.attr("stopwords"))
    stopwords.assign(a->strings().begin(), a->strings().end());
  bool caseSensitive = ctx.intAttr("is_case_sensitive", 0) != 0;
  // Kiln's case rules (ASCII's and the Latin-1 Supplement's) are every
  // locale's but Turkish's and Azerbaijani's, which pair I with a dotless i.
  std::string locale = ctx.stringAttr("locale", "");
  llvm::StringRef language = llvm::StringRef(locale).take_until(
      [](char c) { return c == '_' || c == '-' || c == '.' || c == '@'; });
  bool caseMatters = action != "NONE" || (!stopwords.empty() && !caseSensitive);
  if (caseMatters && (language.equals_insensitive("tr") || language.equals_insensitive("az")))
    return ctx.unsupported("the case rules of locale '" + locale + "' (dotted and dotless i)");
  Value flat = rows ? ctx.make<ReshapeOp>(x, ctx.i64s({-1})) : x;
  // [?, C]: the run stops with a shape error unless dim 0 is 1.
  if (rows && type.isDynamicDim(0))
    flat = requireAtRunTime(ctx, flat,
                            compare(ctx, ComparePredicate::eq, dimValue(ctx, x, 0), i64Scalar(ctx, 1)));
  Value kept = flat;
  if (!stopwords.empty()) {
    if (type.hasStaticShape() && type.getNumElements() > kMaxSelected)
      return ctx.unsupported("StringNormalizer with stopwords over more than " +
                             llvm::Twine(kMaxSelected) + " strings (its selection is quadratic)");
    Value stop = stringOp(ctx, caseSensitive ? "in_set" : "in_set_nocase",
                          {flat, wordList(ctx, stopwords)}, ctx.b.getI1Type());
    Value keep = ctx.cast(ctx.make<NotOp>(stop), ctx.b.getI64Type());
    Value positions = selectedPositions(ctx, keep);
    if (!positions)
      return failure();
    Value selected = ctx.make<GatherOp>(flat, positions, ctx.i64(0));
    // None left: one empty string (the null handle, which the case
    // change below makes "").
    Value padded = ctx.make<ConcatOp>(ValueRange{selected, ctx.indices({0})}, ctx.i64(0));
    Value count = ctx.make<MaxOp>(dimValue(ctx, selected, 0), i64Scalar(ctx, 1));
    kept = ctx.make<GatherOp>(padded, iotaOfLength(ctx, count), ctx.i64(0));
  }
  Value result = stringOp(ctx, kind, {kept}, ctx.b.getI64Type());
  if (result && rows)
    result = ctx.make<ReshapeOp>(result, ctx.i64s({1, -1}));
  return ctx.setStringOutput(0, result);
}

/// `a` and `b` broadcast to their common shape (a select of either by a
/// constant condition).
std::pair<Value, Value> broadcastPair(NodeContext &ctx, Value a, Value b) {
  Value yes = ctx.scalar(ctx.b.getI1Type(), 1), no = ctx.scalar(ctx.b.getI1Type(), 0);
  return {ctx.make<SelectOp>(yes, a, b), ctx.make<SelectOp>(no, a, b)};
}

/// StringConcat: each string of the first input followed by the second's
/// (numpy broadcasting).
LogicalResult importStringConcat(NodeContext &ctx) {
  if (!ctx.isString(0) || !ctx.isString(1))
    return ctx.invalid("both inputs must be string tensors");
  auto [a, b] = broadcastPair(ctx, ctx.input(0), ctx.input(1));
  return ctx.setStringOutput(0, stringOp(ctx, "concat", {a, b}, ctx.b.getI64Type()));
}

/// RE2's syntax (what ONNX's RegexFullMatch names) as a POSIX extended
/// expression anchored at both ends, for the common subset: classes \w
/// \d \s (and their negations outside brackets), \b, escaped
/// punctuation, (?:...) groups; a lazy quantifier is greedy (a full match
/// either exists or not). Anything else is recorded as unsupported.
std::optional<std::string> posixPattern(NodeContext &ctx, llvm::StringRef re) {
  std::string out = "^(";
  auto refuse = [&](const llvm::Twine &what) -> std::optional<std::string> {
    ctx.unsupported("pattern '" + re + "': " + what +
                    " (Kiln matches with POSIX extended expressions)");
    return std::nullopt;
  };
  static const llvm::StringRef punctuation = ".\\+*?()[]{}|^$-/#&~!@%=:;,<>'\"";
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\') {
      if (++i == re.size())
        return refuse("a trailing backslash");
      char n = re[i];
      switch (n) {
      case 'w': out += "[[:alnum:]_]"; continue;
      case 'W': out += "[^[:alnum:]_]"; continue;
      case 'd': out += "[[:digit:]]"; continue;
      case 'D': out += "[^[:digit:]]"; continue;
      case 's': out += "[[:space:]]"; continue;
      case 'S': out += "[^[:space:]]"; continue;
      case 'b': out += "\\b"; continue;
      case 'B': out += "\\B"; continue;
      case 'n': out += "\n"; continue;
      case 't': out += "\t"; continue;
      default:
        if (punctuation.contains(n)) {
          out += std::string("\\") + n;
          continue;
        }
        return refuse(llvm::Twine("the escape \\") + llvm::Twine(n));
      }
    }
    if (c == '(' && i + 1 < re.size() && re[i + 1] == '?') {
      if (i + 2 < re.size() && re[i + 2] == ':') {
        out += '(';
        i += 2;
        continue;
      }
      return refuse("a group with flags or a name");
    }
    if (c == '?' && i > 0 && llvm::StringRef("*+?}").contains(re[i - 1]) &&
        !(i > 1 && re[i - 2] == '\\')) {
      // Lazy: the same full matches.
      continue;
    }
    if (c != '[') {
      out += c;
      continue;
    }
    // A bracket expression: its items, then ']' first and '-' last as
    // POSIX wants them.
    size_t j = i + 1;
    bool negate = j < re.size() && re[j] == '^';
    if (negate)
      ++j;
    std::string items;
    bool bracket = false, dash = false;
    for (bool first = true; j < re.size() && (re[j] != ']' || first); ++j, first = false) {
      char d = re[j];
      if (d == '\\' && j + 1 < re.size()) {
        char n = re[++j];
        if (n == 'w') items += "[:alnum:]_";
        else if (n == 'd') items += "[:digit:]";
        else if (n == 's') items += "[:space:]";
        else if (n == ']') bracket = true;
        else if (n == '-') dash = true;
        else if (n == '\\') items += "\\";
        else if (n == 'n') items += '\n';
        else if (n == 't') items += '\t';
        else if (punctuation.contains(n)) items += n;
        else return refuse(llvm::Twine("the escape \\") + llvm::Twine(n) + " in brackets");
      } else if (d == ']') {
        bracket = true;
      } else if (d == '-' && (j + 1 == re.size() || re[j + 1] == ']' || items.empty())) {
        dash = true;
      } else if (d == '[' && j + 1 < re.size() && re[j + 1] == ':') {
        size_t end = re.find(":]", j);
        if (end == llvm::StringRef::npos)
          return refuse("an unterminated class");
        items += re.slice(j, end + 2).str();
        j = end + 1;
      } else {
        items += d;
      }
    }
    if (j >= re.size())
      return refuse("an unterminated bracket");
    out += std::string("[") + (negate ? "^" : "") + (bracket ? "]" : "") + items +
           (dash ? "-" : "") + "]";
    i = j;
  }
  return out + ")$";
}

/// RegexFullMatch: whether each whole string matches `pattern`.
LogicalResult importRegexFullMatch(NodeContext &ctx) {
  if (!ctx.isString(0))
    return ctx.invalid("the input must be a string tensor");
  std::optional<std::string> pattern = posixPattern(ctx, ctx.stringAttr("pattern", ""));
  if (!pattern)
    return failure();
  return ctx.setOutput(0, stringOp(ctx, "regex_match", {ctx.input(0), wordList(ctx, {*pattern})},
                                   ctx.b.getI1Type()));
}

/// StringSplit: each string's pieces at `delimiter` (none or empty: at
/// runs of whitespace), at most `maxsplit` splits, as Python's
/// str.split; output 0 has one more dim, as long as the most pieces of
/// any string (decided at run time), padded with empty strings; output 1
/// the count of each.
LogicalResult importStringSplit(NodeContext &ctx) {
  if (!ctx.isString(0))
    return ctx.invalid("the input must be a string tensor");
  Value x = ctx.input(0);
  Type i64 = ctx.b.getI64Type();
  Value delimiter = wordList(ctx, {ctx.stringAttr("delimiter", "")});
  int64_t maxsplit = ctx.hasAttr("maxsplit") ? ctx.intAttr("maxsplit", -1) : -1;
  Value limit = ctx.indices({maxsplit < 0 ? -1 : maxsplit});
  Value counts = stringOp(ctx, "split_count", {x, delimiter, limit}, i64);
  if (!counts)
    return failure();
  // The widest: the largest count (0 for no strings).
  int64_t rank = NodeContext::rankOf(x);
  Value flatCounts = ctx.make<ConcatOp>(
      ValueRange{ctx.make<ReshapeOp>(counts, ctx.i64s({-1})), ctx.indices({0})}, ctx.i64(0));
  Value widest = ctx.make<ReduceMaxOp>(flatCounts, ctx.i64s({0}), ctx.b.getBoolAttr(false));
  SmallVector<int64_t> spread(rank + 1, 1);
  spread[rank] = -1;
  Value parts = ctx.make<ReshapeOp>(iotaOfLength(ctx, widest), ctx.i64s(spread));
  auto [strings, part] = broadcastPair(ctx, unsqueeze(ctx, x, {rank}), parts);
  Value pieces = stringOp(ctx, "split_part", {strings, part, delimiter, limit}, i64);
  if (failed(ctx.setStringOutput(0, pieces)))
    return failure();
  return ctx.setOutput(1, counts);
}

/// LabelEncoder: each input's value among the keys (strings, integers or
/// floats) mapped to the value at the same position (numbers, or strings
/// from a string constant), or the default.
LogicalResult importLabelEncoder(NodeContext &ctx) {
  // Only the default of the values' type is used (read below where it is);
  // ONNX Runtime too reads no other.
  ctx.attrsWithoutEffect({"default_string", "default_int64", "default_float"});
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Type i64 = ctx.b.getI64Type(), f32 = ctx.b.getF32Type();
  // The keys.
  std::optional<std::vector<std::string>> stringKeys;
  DenseElementsAttr numericKeys;
  auto stringsOf = [&](llvm::StringRef name) -> std::optional<std::vector<std::string>> {
    const onnx::AttributeProto *a = ctx.attr(name);
    if (!a)
      return std::nullopt;
    if (name.ends_with("_tensor")) {
      if (a->t().data_type() != onnx::TensorProto::STRING)
        return std::nullopt;
      return std::vector<std::string>(a->t().string_data().begin(), a->t().string_data().end());
    }
    return std::vector<std::string>(a->strings().begin(), a->strings().end());
  };
  DenseElementsAttr values;
  Attribute fallback;
  // String values: a string constant, and the default string.
  std::optional<std::vector<std::string>> stringValues;
  std::string defaultString = ctx.stringAttr("default_string", "_Unused");
  if (ctx.opset == 1 && !ctx.isString(0)) {
    // classes_strings: the string at an integer's position.
    stringValues = stringsOf("classes_strings");
    if (!stringValues)
      return ctx.invalid("needs classes_strings");
    int64_t n = static_cast<int64_t>(stringValues->size());
    Value index = x;
    if (NodeContext::elementTypeOf(index) != i64)
      index = ctx.cast(index, i64);
    Value found = ctx.make<AndOp>(compare(ctx, ComparePredicate::ge, index, i64Scalar(ctx, 0)),
                                  compare(ctx, ComparePredicate::lt, index, i64Scalar(ctx, n)));
    Value safe = ctx.make<SelectOp>(found, index, i64Scalar(ctx, 0));
    Value mapped = ctx.make<GatherOp>(stringConstant(ctx, *stringValues, {n}), safe, ctx.i64(0));
    return ctx.setStringOutput(0, ctx.make<SelectOp>(found, mapped,
                                                     stringConstant(ctx, {defaultString}, {})));
  }
  if (ctx.opset == 1) {
    // classes_strings: a string's position, or default_int64.
    stringKeys = stringsOf("classes_strings");
    std::vector<int64_t> positions(stringKeys ? stringKeys->size() : 0);
    for (size_t i = 0; i < positions.size(); ++i)
      positions[i] = static_cast<int64_t>(i);
    values = DenseElementsAttr::get(
        RankedTensorType::get({static_cast<int64_t>(positions.size())}, i64),
        ArrayRef<int64_t>(positions));
    fallback = ctx.b.getI64IntegerAttr(ctx.intAttr("default_int64", -1));
  } else {
    stringValues = ctx.hasAttr("values_strings") ? stringsOf("values_strings")
                                                 : stringsOf("values_tensor");
    if (stringValues) {
      // The values' positions stand for them until the end.
      std::vector<int64_t> positions(stringValues->size());
      for (size_t i = 0; i < positions.size(); ++i)
        positions[i] = static_cast<int64_t>(i);
      values = DenseElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(positions.size())}, i64),
          ArrayRef<int64_t>(positions));
      if (const onnx::AttributeProto *given = ctx.attr("default_tensor")) {
        if (given->t().data_type() != onnx::TensorProto::STRING ||
            given->t().string_data_size() != 1)
          return ctx.invalid("default_tensor must be one string for string values");
        defaultString = given->t().string_data(0);
      }
    }
    stringKeys = ctx.hasAttr("keys_strings") ? stringsOf("keys_strings") : stringsOf("keys_tensor");
    if (!stringKeys) {
      if (ctx.hasAttr("keys_tensor")) {
        numericKeys = ctx.tensorAttr("keys_tensor");
      } else if (ctx.hasAttr("keys_int64s")) {
        SmallVector<int64_t> keys = ctx.intsAttr("keys_int64s");
        numericKeys = DenseElementsAttr::get(
            RankedTensorType::get({static_cast<int64_t>(keys.size())}, i64), ArrayRef<int64_t>(keys));
      } else if (ctx.hasAttr("keys_floats")) {
        SmallVector<float> keys = ctx.floatsAttr("keys_floats");
        numericKeys = DenseElementsAttr::get(
            RankedTensorType::get({static_cast<int64_t>(keys.size())}, f32), ArrayRef<float>(keys));
      }
    }
    if (stringValues) {
      // (set above)
    } else if (ctx.hasAttr("values_tensor")) {
      values = ctx.tensorAttr("values_tensor");
    } else if (ctx.hasAttr("values_int64s")) {
      SmallVector<int64_t> v = ctx.intsAttr("values_int64s");
      values = DenseElementsAttr::get(RankedTensorType::get({static_cast<int64_t>(v.size())}, i64),
                                      ArrayRef<int64_t>(v));
    } else if (ctx.hasAttr("values_floats")) {
      SmallVector<float> v = ctx.floatsAttr("values_floats");
      values = DenseElementsAttr::get(RankedTensorType::get({static_cast<int64_t>(v.size())}, f32),
                                      ArrayRef<float>(v));
    }
    if (!values)
      return ctx.invalid("needs values (values_int64s, values_floats or values_tensor)");
    Type element = values.getElementType();
    if (stringValues) {
      fallback = ctx.b.getI64IntegerAttr(-1);
    } else if (DenseElementsAttr given = ctx.tensorAttr("default_tensor")) {
      if (given.getNumElements() != 1 || given.getElementType() != element)
        return ctx.invalid("default_tensor must be one value of the values' type");
      fallback = given.getValues<Attribute>()[0];
    } else if (isa<FloatType>(element)) {
      fallback = FloatAttr::get(element, ctx.floatAttr("default_float", -0.0f));
    } else {
      fallback = IntegerAttr::get(element, ctx.intAttr("default_int64", -1));
    }
  }
  if (!values || values.getType().getRank() != 1)
    return ctx.invalid("the values must be a list");
  int64_t count = values.getNumElements();
  Value index;
  if (stringKeys) {
    if (!ctx.isString(0))
      return ctx.invalid("string keys need a string input");
    if (static_cast<int64_t>(stringKeys->size()) != count)
      return ctx.invalid("needs as many keys as values");
    index = stringOp(ctx, "index_of", {x, wordList(ctx, *stringKeys)}, i64);
  } else {
    if (!numericKeys || numericKeys.getType().getRank() != 1 || numericKeys.getNumElements() != count)
      return ctx.invalid("needs as many keys (keys_int64s, keys_floats or keys_tensor) as values");
    if (ctx.isString(0) || numericKeys.getElementType() != NodeContext::elementTypeOf(x))
      return ctx.invalid("the keys must have the input's type");
    // The matching key's position + 1 (0: none), the largest over keys.
    int64_t rank = NodeContext::rankOf(x);
    Value same = compare(ctx, ComparePredicate::eq, unsqueeze(ctx, x, {rank}),
                         ctx.constant(numericKeys));
    SmallVector<int64_t> shape(rank + 1, 1);
    shape[rank] = count;
    Value marks = ctx.make<MulOp>(ctx.cast(same, i64),
                                  ctx.make<AddOp>(iotaAlong(ctx, shape, rank), i64Scalar(ctx, 1)));
    index = ctx.make<SubOp>(ctx.make<ReduceMaxOp>(marks, ctx.i64s({rank}), ctx.b.getBoolAttr(false)),
                            i64Scalar(ctx, 1));
  }
  if (!index || count == 0)
    return count == 0 ? ctx.invalid("needs at least one key") : failure();
  Value found = compare(ctx, ComparePredicate::ge, index, i64Scalar(ctx, 0));
  Value safe = ctx.make<MaxOp>(index, i64Scalar(ctx, 0));
  if (stringValues) {
    Value table = stringConstant(ctx, *stringValues, {count});
    Value mapped = ctx.make<GatherOp>(table, safe, ctx.i64(0));
    return ctx.setStringOutput(0, ctx.make<SelectOp>(found, mapped,
                                                     stringConstant(ctx, {defaultString}, {})));
  }
  Value mapped = ctx.make<GatherOp>(ctx.constant(values), safe, ctx.i64(0));
  auto scalarType = RankedTensorType::get({}, values.getElementType());
  Value otherwise = ctx.constant(DenseElementsAttr::get(scalarType, fallback));
  return ctx.setOutput(0, ctx.make<SelectOp>(found, mapped, otherwise));
}

} // namespace

Value buildStringConstant(OpBuilder &b, Location loc, ArrayRef<std::string> strings,
                          ArrayRef<int64_t> shape) {
  Type i64 = b.getI64Type();
  auto type = RankedTensorType::get(shape, i64);
  if (strings.empty())
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getZeroAttr(i64)));
  std::vector<int8_t> bytes;
  std::vector<int64_t> offsets;
  for (const std::string &s : strings) {
    offsets.push_back(static_cast<int64_t>(bytes.size()));
    bytes.insert(bytes.end(), s.begin(), s.end());
    bytes.push_back(0);
  }
  int64_t n = static_cast<int64_t>(strings.size());
  Value text = ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                                           b.getI8Type()),
                                     ArrayRef<int8_t>(bytes)));
  Value at = ConstantOp::create(
      b, loc, DenseElementsAttr::get(RankedTensorType::get({n}, i64), ArrayRef<int64_t>(offsets)));
  Value handles = StringOp::create(b, loc, RankedTensorType::get({n}, i64), b.getStringAttr("at"),
                                   TypeAttr::get(i64), ValueRange{at, text});
  if (shape.size() == 1)
    return handles;
  return ReshapeOp::create(b, loc, type, handles, b.getDenseI64ArrayAttr(shape));
}

Value stringConstant(NodeContext &ctx, ArrayRef<std::string> strings, ArrayRef<int64_t> shape) {
  return ctx.asString(buildStringConstant(ctx.b, ctx.loc, strings, shape));
}

Value stringTensorConstant(OpBuilder &b, Location loc, const onnx::TensorProto &tensor,
                           std::string &error) {
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  int64_t count = 1;
  for (int64_t d : dims)
    count = d < 0 || (d != 0 && count > (int64_t(1) << 40) / d) ? -1 : count * d;
  if (count != tensor.string_data_size()) {
    error = std::to_string(tensor.string_data_size()) + " strings for its dims";
    return nullptr;
  }
  std::vector<std::string> strings(tensor.string_data().begin(), tensor.string_data().end());
  return buildStringConstant(b, loc, strings, dims);
}

LogicalResult castStrings(NodeContext &ctx, int to, Type target) {
  Value x = ctx.input(0);
  if (!x)
    return failure();
  Type i64 = ctx.b.getI64Type();
  if (ctx.isString(0)) {
    if (to == onnx::TensorProto::STRING)
      return ctx.setStringOutput(0, stringOp(ctx, "copy", {x}, i64));
    // Parsed as f32, f64 or i64, then converted.
    Type parsed = target.isF64() ? ctx.b.getF64Type()
                  : isa<FloatType>(target) ? ctx.b.getF32Type()
                  : isa<IntegerType>(target) && !target.isInteger(1) ? i64
                                                                      : Type();
    if (!parsed)
      return ctx.unsupported("cast of strings to " + dataTypeName(to) +
                             " (Kiln parses strings into floats and integers)");
    Value number = stringOp(ctx, "parse", {x}, parsed);
    return ctx.setOutput(0, parsed == target ? number : ctx.cast(number, target));
  }
  Type source = NodeContext::elementTypeOf(x);
  Value number = x;
  if (source.isInteger(1) || (!source.isF32() && !source.isF64() && !isa<IntegerType>(source)))
    return ctx.unsupported("cast of this element type to strings (Kiln formats float32, "
                           "float64 and integers)");
  if (isa<IntegerType>(source) && !source.isInteger(64))
    number = ctx.cast(x, i64);
  else if (isa<IntegerType>(source) && cast<IntegerType>(source).isUnsigned())
    return ctx.unsupported("cast of uint64 to strings");
  return ctx.setStringOutput(0, stringOp(ctx, "format", {number}, i64));
}

LogicalResult compareStrings(NodeContext &ctx) {
  if (!ctx.isString(0) || !ctx.isString(1))
    return ctx.invalid("compares a string tensor with one of numbers");
  Value a = ctx.input(0), b = ctx.input(1);
  if (!a || !b)
    return failure();
  // Both broadcast to the common shape (a select of either by a constant).
  auto [left, right] = broadcastPair(ctx, a, b);
  return ctx.setOutput(0, stringOp(ctx, "equal", {left, right}, ctx.b.getI1Type()));
}

void registerStringOps(OpRegistry &r) {
  r.add("StringNormalizer", 10, kAnyLaterOpset, importStringNormalizer);
  r.add("StringConcat", 20, kAnyLaterOpset, importStringConcat);
  r.add("RegexFullMatch", 20, kAnyLaterOpset, importRegexFullMatch);
  r.add("StringSplit", 20, kAnyLaterOpset, importStringSplit);
  r.add("LabelEncoder", 1, kAnyLaterOpset, importLabelEncoder, "ai.onnx.ml");
}

} // namespace kiln::onnx_frontend
