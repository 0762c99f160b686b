//===- StringCalls.cpp - kiln.string as calls of the entry point's C -------===//
//
// A `kiln.string` op bufferises into a call of `kiln_string_<kind>` on its
// 1-D buffers (any strides), and the artifact's C entry point defines those
// functions: the code that reads and makes characters is plain C, the same
// on every host, and the strings it makes live in storage the runtime
// keeps until the session's next run (services' allocate_strings).
//
//===----------------------------------------------------------------------===//

#include "backends/common/StringCalls.h"
#include "backends/common/LibraryClaims.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace kiln::strings {

namespace {

/// "kiln_string_lower", "kiln_string_parse_f32", ...
std::string functionName(StringOp op) {
  std::string name = kFunctionPrefix.str() + op.getKind().str();
  Type typed = op.getKind() == "parse"    ? op.getElementType()
               : op.getKind() == "format" ? getElementTypeOrSelf(op.getOperands()[0].getType())
                                          : Type();
  if (typed)
    name += typed.isF32() ? "_f32" : typed.isF64() ? "_f64" : "_i64";
  return name;
}

/// A 1-D buffer type with any size, offset and stride: what the string
/// functions take.
MemRefType anyVector(Type element) {
  MLIRContext *context = element.getContext();
  return MemRefType::get({ShapedType::kDynamic}, element,
                         StridedLayoutAttr::get(context, ShapedType::kDynamic,
                                                {ShapedType::kDynamic}));
}

struct StringModel : bufferization::BufferizableOpInterface::ExternalModel<StringModel, StringOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &, const bufferization::AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const bufferization::AnalysisState &) const {
    return false;
  }
  bufferization::AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                                     const bufferization::AnalysisState &) const {
    return {};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto strings = cast<StringOp>(op);
    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(strings.getType());
    if (resultType.getRank() != 1)
      return op->emitOpError("must be 1-D when it is bufferised (the frontends flatten it)");
    SmallVector<Value> args;
    Value first;
    for (Value operand : strings.getOperands()) {
      FailureOr<Value> buffer = bufferization::getBuffer(rewriter, operand, options, state);
      if (failed(buffer))
        return failure();
      auto type = cast<MemRefType>(buffer->getType());
      if (!first)
        first = *buffer;
      args.push_back(memref::CastOp::create(rewriter, loc, anyVector(type.getElementType()),
                                            *buffer));
    }
    auto outType = MemRefType::get(resultType.getShape(), resultType.getElementType());
    SmallVector<Value> sizes;
    if (resultType.isDynamicDim(0))
      sizes.push_back(memref::DimOp::create(rewriter, loc, first, 0));
    Value output = memref::AllocOp::create(rewriter, loc, outType, sizes);
    args.push_back(memref::CastOp::create(rewriter, loc, anyVector(outType.getElementType()),
                                          output));
    library::callExternal(rewriter, op, functionName(strings), args);
    bufferization::replaceOpWithBufferizedValues(rewriter, op, output);
    return success();
  }
};

} // namespace

void registerStringBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, KilnDialect *) {
    StringOp::attachInterface<StringModel>(*context);
  });
}

std::string functionsSource() {
  // After the entry point's memref1, services, services_state and
  // allocation_failed. A handle is a char pointer; a null one is "".
  return R"C(
/* The string functions kiln.string calls (backends/common/StringCalls.cpp). */
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define KILN_AT(m, T, i) (((T *)(m)->aligned)[(m)->offset + (i) * (m)->strides[0]])
static const char *kiln_text(int64_t handle) {
  return handle ? (const char *)(intptr_t)handle : "";
}
/* `bytes` of the session's string storage, or NULL (the run stops). */
static char *kiln_string_storage(size_t bytes) {
  char *p = (char *)services->allocate_strings(services_state, bytes ? bytes : 1);
  if (!p) allocation_failed();
  return p;
}
/* Byte i of s in the other case: ASCII letters, and the Latin-1
 * Supplement's in UTF-8 (C3 80..9E <-> C3 A0..BE, but for the
 * multiplication and division signs). The length never changes. */
static unsigned char kiln_case_byte(const unsigned char *s, size_t i, int upper) {
  unsigned char c = s[i];
  if (c < 0x80) {
    if (upper) return c >= 'a' && c <= 'z' ? (unsigned char)(c - 32) : c;
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
  }
  if (i > 0 && s[i - 1] == 0xC3) {
    if (!upper && c >= 0x80 && c <= 0x9E && c != 0x97) return (unsigned char)(c + 0x20);
    if (upper && c >= 0xA0 && c <= 0xBE && c != 0xB7) return (unsigned char)(c - 0x20);
  }
  return c;
}
static void kiln_string_case(memref1 *in, memref1 *out, int mode /* 0 copy, 1 lower, 2 upper */) {
  int64_t n = in->sizes[0];
  if (mode == 0) {
    for (int64_t i = 0; i < n; ++i)
      KILN_AT(out, int64_t, i) = (int64_t)(intptr_t)kiln_text(KILN_AT(in, int64_t, i));
    return;
  }
  size_t total = 0;
  for (int64_t i = 0; i < n; ++i)
    total += strlen(kiln_text(KILN_AT(in, int64_t, i))) + 1;
  char *p = kiln_string_storage(total);
  if (!p) return;
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char *s = (const unsigned char *)kiln_text(KILN_AT(in, int64_t, i));
    size_t len = strlen((const char *)s);
    for (size_t k = 0; k < len; ++k) p[k] = (char)kiln_case_byte(s, k, mode == 2);
    p[len] = 0;
    KILN_AT(out, int64_t, i) = (int64_t)(intptr_t)p;
    p += len + 1;
  }
}
void _mlir_ciface_kiln_string_copy(memref1 *in, memref1 *out) { kiln_string_case(in, out, 0); }
void _mlir_ciface_kiln_string_lower(memref1 *in, memref1 *out) { kiln_string_case(in, out, 1); }
void _mlir_ciface_kiln_string_upper(memref1 *in, memref1 *out) { kiln_string_case(in, out, 2); }
/* NaN when the string spells no number. */
#define KILN_PARSE(NAME, T, READ)                                    \
  void _mlir_ciface_kiln_string_parse_##NAME(memref1 *in, memref1 *out) { \
    for (int64_t i = 0; i < in->sizes[0]; ++i) {                     \
      const char *s = kiln_text(KILN_AT(in, int64_t, i));            \
      char *end;                                                     \
      T v = READ(s, &end);                                           \
      KILN_AT(out, T, i) = end == s ? (T)NAN : v;                    \
    }                                                                \
  }
KILN_PARSE(f32, float, strtof)
KILN_PARSE(f64, double, strtod)
void _mlir_ciface_kiln_string_parse_i64(memref1 *in, memref1 *out) {
  for (int64_t i = 0; i < in->sizes[0]; ++i)
    KILN_AT(out, int64_t, i) = strtoll(kiln_text(KILN_AT(in, int64_t, i)), NULL, 10);
}
/* x as numpy's str: the fewest digits that read back to x (up to
 * `digits`), positional for 1e-4 <= |x| < 1e16 (and 0), else
 * d.ddde+XX. At most 32 bytes with the NUL. */
static size_t kiln_format_float(double x, int is_f32, char *buf) {
  if (isnan(x)) return (size_t)sprintf(buf, "nan");
  if (isinf(x)) return (size_t)sprintf(buf, x < 0 ? "-inf" : "inf");
  char sci[40];
  int p, digits = is_f32 ? 9 : 17;
  for (p = 1; p < digits; ++p) {
    snprintf(sci, sizeof sci, "%.*e", p - 1, x);
    if (is_f32 ? strtof(sci, NULL) == (float)x : strtod(sci, NULL) == x) break;
  }
  snprintf(sci, sizeof sci, "%.*e", p - 1, x);
  double a = x < 0 ? -x : x;
  if (a != 0 && (a < 1e-4 || a >= 1e16)) return (size_t)sprintf(buf, "%s", sci);
  /* sci is [-]d[.ddd]e(+|-)XX: its digits and exponent, written out. */
  char d[24];
  int nd = 0, e;
  const char *s = sci;
  char *q = buf;
  if (*s == '-') *q++ = *s++;
  for (; *s != 'e'; ++s)
    if (*s != '.') d[nd++] = *s;
  e = atoi(s + 1);
  if (e >= 0) {
    for (int k = 0; k <= e; ++k) *q++ = k < nd ? d[k] : '0';
    *q++ = '.';
    if (nd > e + 1)
      for (int k = e + 1; k < nd; ++k) *q++ = d[k];
    else
      *q++ = '0';
  } else {
    *q++ = '0';
    *q++ = '.';
    for (int k = 0; k < -e - 1; ++k) *q++ = '0';
    for (int k = 0; k < nd; ++k) *q++ = d[k];
  }
  *q = 0;
  return (size_t)(q - buf);
}
static void kiln_string_format(memref1 *in, memref1 *out, int type /* 0 f32, 1 f64, 2 i64 */) {
  int64_t n = in->sizes[0];
  char *p = kiln_string_storage((size_t)n * 32);
  if (!p) return;
  for (int64_t i = 0; i < n; ++i) {
    size_t len;
    if (type == 0) len = kiln_format_float(KILN_AT(in, float, i), 1, p);
    else if (type == 1) len = kiln_format_float(KILN_AT(in, double, i), 0, p);
    else len = (size_t)sprintf(p, "%lld", (long long)KILN_AT(in, int64_t, i));
    KILN_AT(out, int64_t, i) = (int64_t)(intptr_t)p;
    p += len + 1;
  }
}
void _mlir_ciface_kiln_string_format_f32(memref1 *in, memref1 *out) { kiln_string_format(in, out, 0); }
void _mlir_ciface_kiln_string_format_f64(memref1 *in, memref1 *out) { kiln_string_format(in, out, 1); }
void _mlir_ciface_kiln_string_format_i64(memref1 *in, memref1 *out) { kiln_string_format(in, out, 2); }
static int kiln_same_text(const unsigned char *a, const unsigned char *b, int fold) {
  size_t i = 0;
  for (;; ++i) {
    unsigned char x = fold ? kiln_case_byte(a, i, 0) : a[i];
    unsigned char y = fold ? kiln_case_byte(b, i, 0) : b[i];
    if (x != y) return 0;
    if (!x) return 1;
  }
}
/* words: the words, each followed by a NUL (a constant: contiguous). */
static void kiln_string_in(memref1 *in, memref1 *words, memref1 *out, int fold) {
  int64_t bytes = words->sizes[0];
  const char *list = (const char *)words->aligned + words->offset;
  if (bytes > 1 && words->strides[0] != 1) { call_failed = 1; return; }
  for (int64_t i = 0; i < in->sizes[0]; ++i) {
    const unsigned char *s = (const unsigned char *)kiln_text(KILN_AT(in, int64_t, i));
    uint8_t found = 0;
    for (int64_t k = 0; k < bytes && !found; k += (int64_t)strnlen(list + k, (size_t)(bytes - k)) + 1)
      found = (uint8_t)kiln_same_text(s, (const unsigned char *)list + k, fold);
    KILN_AT(out, uint8_t, i) = found;
  }
}
void _mlir_ciface_kiln_string_in_set(memref1 *in, memref1 *words, memref1 *out) {
  kiln_string_in(in, words, out, 0);
}
void _mlir_ciface_kiln_string_in_set_nocase(memref1 *in, memref1 *words, memref1 *out) {
  kiln_string_in(in, words, out, 1);
}
void _mlir_ciface_kiln_string_index_of(memref1 *in, memref1 *words, memref1 *out) {
  int64_t bytes = words->sizes[0];
  const char *list = (const char *)words->aligned + words->offset;
  if (bytes > 1 && words->strides[0] != 1) { call_failed = 1; return; }
  for (int64_t i = 0; i < in->sizes[0]; ++i) {
    const char *s = kiln_text(KILN_AT(in, int64_t, i));
    int64_t found = -1, index = 0;
    for (int64_t k = 0; k < bytes && found < 0; ++index) {
      if (strcmp(s, list + k) == 0) found = index;
      k += (int64_t)strnlen(list + k, (size_t)(bytes - k)) + 1;
    }
    KILN_AT(out, int64_t, i) = found;
  }
}
void _mlir_ciface_kiln_string_concat(memref1 *a, memref1 *b, memref1 *out) {
  int64_t n = a->sizes[0];
  size_t total = 0;
  for (int64_t i = 0; i < n; ++i)
    total += strlen(kiln_text(KILN_AT(a, int64_t, i))) +
             strlen(kiln_text(KILN_AT(b, int64_t, i))) + 1;
  char *p = kiln_string_storage(total);
  if (!p) return;
  for (int64_t i = 0; i < n; ++i) {
    const char *x = kiln_text(KILN_AT(a, int64_t, i)), *y = kiln_text(KILN_AT(b, int64_t, i));
    size_t lx = strlen(x), ly = strlen(y);
    memcpy(p, x, lx);
    memcpy(p + lx, y, ly);
    p[lx + ly] = 0;
    KILN_AT(out, int64_t, i) = (int64_t)(intptr_t)p;
    p += lx + ly + 1;
  }
}
void _mlir_ciface_kiln_string_regex_match(memref1 *in, memref1 *pattern, memref1 *out) {
  const char *text = (const char *)pattern->aligned + pattern->offset;
  regex_t re;
  if (pattern->sizes[0] < 1 || text[pattern->sizes[0] - 1] != 0 ||
      regcomp(&re, text, REG_EXTENDED | REG_NOSUB) != 0) {
    call_failed = 1;
    return;
  }
  for (int64_t i = 0; i < in->sizes[0]; ++i)
    KILN_AT(out, uint8_t, i) = (uint8_t)(regexec(&re, kiln_text(KILN_AT(in, int64_t, i)), 0,
                                                 NULL, 0) == 0);
  regfree(&re);
}
/* Python's str.split(sep or None, maxsplit) of s: the number of pieces,
 * and where piece `want` starts and how long it is (when there is one). */
static int64_t kiln_split(const char *s, const char *sep, int64_t maxsplit, int64_t want,
                          const char **start, size_t *len) {
  size_t n = strlen(s), i = 0, seplen = strlen(sep);
  int64_t count = 0, left = maxsplit < 0 ? INT64_MAX : maxsplit;
#define KILN_PIECE(from, to) \
  do { if (count == want) { *start = s + (from); *len = (to) - (from); } ++count; } while (0)
  if (seplen == 0) {
    while (left-- > 0) {
      while (i < n && isspace((unsigned char)s[i])) ++i;
      if (i == n) break;
      size_t j = i++;
      while (i < n && !isspace((unsigned char)s[i])) ++i;
      KILN_PIECE(j, i);
    }
    if (i < n) {
      while (i < n && isspace((unsigned char)s[i])) ++i;
      if (i != n) KILN_PIECE(i, n);
    }
  } else {
    while (left-- > 0) {
      const char *hit = strstr(s + i, sep);
      if (!hit) break;
      size_t j = (size_t)(hit - s);
      KILN_PIECE(i, j);
      i = j + seplen;
    }
    KILN_PIECE(i, n);
  }
#undef KILN_PIECE
  return count;
}
static const char *kiln_delimiter(memref1 *delimiter) {
  const char *d = (const char *)delimiter->aligned + delimiter->offset;
  return delimiter->sizes[0] >= 1 && d[delimiter->sizes[0] - 1] == 0 ? d : NULL;
}
void _mlir_ciface_kiln_string_split_count(memref1 *in, memref1 *delimiter, memref1 *limit,
                                         memref1 *out) {
  const char *sep = kiln_delimiter(delimiter), *start;
  size_t len;
  if (!sep || limit->sizes[0] < 1) { call_failed = 1; return; }
  for (int64_t i = 0; i < in->sizes[0]; ++i)
    KILN_AT(out, int64_t, i) = kiln_split(kiln_text(KILN_AT(in, int64_t, i)), sep,
                                          KILN_AT(limit, int64_t, 0), -1, &start, &len);
}
void _mlir_ciface_kiln_string_split_part(memref1 *in, memref1 *part, memref1 *delimiter,
                                        memref1 *limit, memref1 *out) {
  const char *sep = kiln_delimiter(delimiter);
  if (!sep || limit->sizes[0] < 1) { call_failed = 1; return; }
  int64_t n = in->sizes[0];
  size_t total = 0;
  for (int64_t pass = 0; pass < 2; ++pass) {
    char *p = NULL;
    if (pass == 1 && !(p = kiln_string_storage(total))) return;
    for (int64_t i = 0; i < n; ++i) {
      const char *start = "";
      size_t len = 0;
      kiln_split(kiln_text(KILN_AT(in, int64_t, i)), sep, KILN_AT(limit, int64_t, 0),
                 KILN_AT(part, int64_t, i), &start, &len);
      if (pass == 0) { total += len + 1; continue; }
      memcpy(p, start, len);
      p[len] = 0;
      KILN_AT(out, int64_t, i) = (int64_t)(intptr_t)p;
      p += len + 1;
    }
  }
}
/* String constants: the strings at `offsets` in the constant `text` (the
 * artifact's read-only data, as long as it is loaded). */
void _mlir_ciface_kiln_string_at(memref1 *offsets, memref1 *text, memref1 *out) {
  const char *base = (const char *)text->aligned + text->offset;
  if (text->sizes[0] > 1 && text->strides[0] != 1) { call_failed = 1; return; }
  for (int64_t i = 0; i < offsets->sizes[0]; ++i) {
    int64_t at = KILN_AT(offsets, int64_t, i);
    if (at < 0 || at >= text->sizes[0]) { call_failed = 1; return; }
    KILN_AT(out, int64_t, i) = (int64_t)(intptr_t)(base + at);
  }
}
void _mlir_ciface_kiln_string_equal(memref1 *a, memref1 *b, memref1 *out) {
  for (int64_t i = 0; i < a->sizes[0]; ++i)
    KILN_AT(out, uint8_t, i) = (uint8_t)(strcmp(kiln_text(KILN_AT(a, int64_t, i)),
                                                kiln_text(KILN_AT(b, int64_t, i))) == 0);
}
)C";
}

} // namespace kiln::strings
