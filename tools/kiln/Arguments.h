//===- Arguments.h - reading a command's arguments --------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_ARGUMENTS_H
#define KILN_TOOLS_KILN_ARGUMENTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>

namespace kiln::cli {

/// Walks a command's arguments, where an option's value may follow `=` or
/// be the next argument.
class ArgumentCursor {
public:
  explicit ArgumentCursor(llvm::ArrayRef<llvm::StringRef> args) : args(args) {}
  bool done() const { return index >= args.size(); }
  llvm::StringRef current() const { return args[index]; }
  void next() { ++index; }
  /// The value of option `flag` when the current argument is it (consuming
  /// a separate value argument).
  std::optional<std::string> value(llvm::StringRef flag) {
    llvm::StringRef arg = current();
    if (!arg.consume_front(flag))
      return std::nullopt;
    if (arg.consume_front("="))
      return arg.str();
    if (arg.empty() && index + 1 < args.size())
      return args[++index].str();
    return std::nullopt;
  }

private:
  llvm::ArrayRef<llvm::StringRef> args;
  size_t index = 0;
};

/// Splits `NAME=FILE`; without `=` the name is empty.
inline std::pair<std::string, std::string> splitNameFile(const std::string &v) {
  size_t eq = v.find('=');
  if (eq == std::string::npos)
    return {"", v};
  return {v.substr(0, eq), v.substr(eq + 1)};
}

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_ARGUMENTS_H
