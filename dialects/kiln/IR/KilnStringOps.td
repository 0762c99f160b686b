//===- KilnStringOps.td - operations on string tensors -*- tablegen -*-===//
//
// A string tensor is a tensor of i64 handles: each element is the address
// of a NUL-terminated UTF-8 string (the runtime's KILN_DTYPE_STRING, an
// entry argument or result marked `kiln.string`). Ops that only move
// elements (reshape, transpose, gather, concat, slice, ...) move handles
// like any i64; what reads or makes the characters is `kiln.string`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_STRING_OPS_TD
#define KILN_STRING_OPS_TD

include "dialects/kiln/IR/KilnDialect.td"

def Kiln_StringOp : Kiln_InferredOp<"string"> {
  let summary = "an elementwise operation on string handles";
  let description = [{
    `kind` says what each element becomes; the result has the first
    operand's shape and `element_type`:

    - `lower`, `upper`: the string with its ASCII letters (and the Latin-1
      Supplement's, in UTF-8) changed to lower or upper case; `copy`: the
      same string. All three make a null handle the empty string. Result:
      handles (i64).
    - `parse`: the number the string spells (C's strtod: `1.5e-3`, `NaN`,
      `INF`, `-inf`; NaN, or 0 for an integer type, when it spells none).
      Result: f32, f64 or i64.
    - `format`: the number as text (f32/f64: the shortest digits that read
      back to the same value, positional between 1e-4 and 1e16 and with
      an exponent outside, `nan`, `inf`, `-inf`, as numpy's str; i64:
      decimal). Result: handles.
    - `in_set`, `in_set_nocase`: whether the string is one of the words in
      the second operand (a 1-D i8 tensor holding them, each followed by a
      NUL byte), compared bytewise or ignoring case. Result: i1.
    - `equal`: whether the strings of the two operands (same shape) are
      the same bytes. Result: i1.
    - `concat`: the string of the first operand followed by the second's
      (same shape). Result: handles.
    - `index_of`: the position of the string among the words of the
      second operand (as for `in_set`, compared bytewise), -1 when it is
      none of them. Result: i64.
    - `regex_match`: whether the whole string matches the POSIX extended
      regular expression (with GNU's `\w`, `\W`, `\s`, `\S`, `\b`) in
      the second operand (its bytes, NUL-terminated); an expression that
      does not compile stops the run. Result: i1.
    - `at`: string constants: the address of the byte at each offset
      (the first operand, i64) in the second operand (a constant i8
      tensor holding NUL-terminated strings, in the artifact's read-only
      data). Result: handles.
    - `split_count`: how many pieces the string splits into at the
      delimiter in the second operand (NUL-terminated bytes; empty: at
      runs of whitespace), splitting at most as many times as the limit
      in the third (a 1-D i64 tensor, its first element; negative: no
      limit), as Python's str.split(delimiter or None, limit). Result:
      i64.
    - `split_part`: piece number `part` (the second operand, of the
      first's shape) of that split (delimiter and limit the third and
      fourth operands), or the empty string past the last. Result:
      handles.

    The CPU backend runs each as one call over the whole tensor; the
    strings it makes belong to the session until its next run.

    ```mlir
    %lower = kiln.string %x {kind = "lower", element_type = i64}
        : (tensor<?xi64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins StrAttr:$kind, TypeAttr:$element_type,
                       Variadic<AnyRankedTensor>:$operands);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operands attr-dict `:` functional-type($operands, results)";
  let hasVerifier = 1;
  let inferCall = [{
    if (adaptor.getOperands().empty())
      return ::mlir::emitOptionalError(location, "string: needs an operand");
    auto type = ::llvm::dyn_cast<::mlir::RankedTensorType>(adaptor.getOperands()[0].getType());
    if (!type)
      return ::mlir::emitOptionalError(location, "string: operand 0 must be a ranked tensor");
    inferred.push_back(::mlir::RankedTensorType::get(type.getShape(), adaptor.getElementType()));
    return ::mlir::success();
  }];
}

#endif // KILN_STRING_OPS_TD
