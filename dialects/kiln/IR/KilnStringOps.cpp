//===- KilnStringOps.cpp - the kiln.string verifier ------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

LogicalResult StringOp::verify() {
  llvm::StringRef kind = getKind();
  Type handle = IntegerType::get(getContext(), 64);
  Type i1 = IntegerType::get(getContext(), 1);
  auto typeOf = [&](unsigned i) { return cast<RankedTensorType>(getOperands()[i].getType()); };
  auto isNumber = [&](Type t) { return t.isF32() || t.isF64() || t.isInteger(64); };
  size_t operands = llvm::StringSwitch<size_t>(kind)
                        .Cases({"lower", "upper", "copy", "parse", "format"}, 1)
                        .Cases({"in_set", "in_set_nocase", "equal", "concat", "index_of",
                                "regex_match", "at"},
                               2)
                        .Case("split_count", 3)
                        .Case("split_part", 4)
                        .Default(0);
  if (operands == 0)
    return emitOpError("has an unknown kind '") << kind << "'";
  if (getOperands().size() != operands)
    return emitOpError("'") << kind << "' takes " << operands << " operand(s)";
  Type in = typeOf(0).getElementType(), out = getElementType();
  if (kind == "format") {
    if (!isNumber(in) || out != handle)
      return emitOpError("'format' turns f32, f64 or i64 into i64 handles");
    return success();
  }
  if (in != handle)
    return emitOpError("'") << kind << "' reads i64 "
                            << (kind == "at" ? "offsets" : "string handles");
  // Operands read elementwise with the first: of its shape.
  auto sameShape = [&](unsigned i) {
    RankedTensorType a = typeOf(0), b = typeOf(i);
    if (b.getElementType() != handle || a.getRank() != b.getRank())
      return false;
    for (int64_t d = 0; d < a.getRank(); ++d)
      if (!a.isDynamicDim(d) && !b.isDynamicDim(d) && a.getDimSize(d) != b.getDimSize(d))
        return false;
    return true;
  };
  // Constant text (words, a pattern, a delimiter), NUL-terminated bytes.
  auto isText = [&](unsigned i) {
    return typeOf(i).getElementType().isInteger(8) && typeOf(i).getRank() == 1;
  };
  Type wanted = llvm::StringSwitch<Type>(kind)
                    .Cases({"lower", "upper", "copy", "concat", "split_part", "at"}, handle)
                    .Cases({"in_set", "in_set_nocase", "equal", "regex_match"}, i1)
                    .Cases({"index_of", "split_count"}, handle)
                    .Default(Type());
  if (kind == "parse")
    return isNumber(out) ? success() : emitOpError("'parse' makes f32, f64 or i64");
  if (out != wanted)
    return emitOpError("'") << kind << "' makes " << wanted;
  if ((kind == "equal" || kind == "concat") && !sameShape(1))
    return emitOpError("'") << kind << "' reads two handle tensors of the same shape";
  if ((kind == "in_set" || kind == "in_set_nocase" || kind == "index_of" ||
       kind == "regex_match" || kind == "at") &&
      !isText(1))
    return emitOpError("'") << kind << "' takes its text as a 1-D i8 tensor";
  if (kind == "split_count" && (!isText(1) || !typeOf(2).getElementType().isInteger(64)))
    return emitOpError("'split_count' takes a 1-D i8 delimiter and an i64 limit");
  if (kind == "split_part" && (!typeOf(1).getElementType().isInteger(64) || !sameShape(1) ||
                               !isText(2) || !typeOf(3).getElementType().isInteger(64)))
    return emitOpError("'split_part' takes i64 part numbers of its shape, a 1-D i8 delimiter "
                       "and an i64 limit");
  return success();
}

} // namespace kiln
