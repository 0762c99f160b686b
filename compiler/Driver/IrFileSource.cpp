//===- IrFileSource.cpp - kiln IR from a .mlir or .mlirbc file ------------===//

#include "compiler/Driver/Driver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>

using namespace mlir;

namespace kiln::driver {

bool isIrFile(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".mlir" || ext == ".mlirbc";
}

/// MLIR's text parser allocates each resource blob with the alignment its
/// first four bytes declare, and aborts the process on an alignment of 0
/// or one too large to allocate. Check them before parsing: every quoted
/// "0x..." string of the file's `{-# ... #-}` section.
static bool checkResourceAlignments(llvm::StringRef text, llvm::raw_ostream &errors) {
  if (text.starts_with("ML\xefR")) // bytecode: its reader checks its own fields
    return true;
  size_t section = text.find("{-#");
  if (section == llvm::StringRef::npos)
    return true;
  llvm::StringRef rest = text.drop_front(section);
  bool ok = true;
  // After each blob, the search goes on past its closing quote (found with
  // memchr): a substring search through gigabytes of hex took seconds.
  for (size_t at = rest.find("\"0x"); at != llvm::StringRef::npos;
       at = rest.find("\"0x", std::min(rest.find('"', at + 3), rest.size()))) {
    llvm::StringRef hex = rest.substr(at + 3, 8);
    uint32_t alignment = 0;
    bool valid = hex.size() == 8 && llvm::all_of(hex, llvm::isHexDigit);
    for (size_t i = 0; valid && i < 4; ++i)
      alignment |= static_cast<uint32_t>(llvm::hexFromNibbles(hex[2 * i], hex[2 * i + 1]))
                   << (8 * i);
    if (!valid || alignment == 0 || !llvm::isPowerOf2_32(alignment) || alignment > 4096) {
      errors << "  a resource blob declares alignment " << (valid ? std::to_string(alignment)
                                                                  : std::string("(none)"))
             << " in its first four bytes: it must be a power of two up to 4096\n";
      ok = false;
    }
  }
  return ok;
}

/// Calls `visit` with each token of MLIR text that the check below needs,
/// and its offset, in order: a bare identifier (`array`, `index`,
/// `kiln.conv`), a sigil and its name (`!t`, `#a`, `%0`, `@f`), a number,
/// or one other character; comments and strings skipped.
static void forEachToken(llvm::StringRef text,
                         llvm::function_ref<void(llvm::StringRef, size_t)> visit) {
  auto isName = [](char c) { return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.'; };
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (llvm::isSpace(c)) {
      ++i;
    } else if (text.substr(i).starts_with("//")) {
      i = std::min(text.find('\n', i), n);
    } else if (c == '"') {
      // The closing quote by memchr when no escape or line break comes
      // first (resource blobs: gigabytes of hex), else a character at a time.
      size_t close = text.find('"', i + 1);
      llvm::StringRef body = text.slice(i + 1, close);
      if (close != llvm::StringRef::npos && body.find('\\') == llvm::StringRef::npos &&
          body.find('\n') == llvm::StringRef::npos) {
        i = close + 1;
        continue;
      }
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
    } else {
      size_t start = i++;
      if (llvm::isAlnum(c) || c == '_' || llvm::is_contained("!#%@^", c))
        while (i < n && isName(text[i]))
          ++i;
      visit(text.slice(start, i), start);
    }
  }
}

/// MLIR 22's parser takes `index` as a dense array's element type and then
/// reads it as a float type (a crash): `array<index: 1>`, or through a
/// type alias of index. Refuse those before parsing, at their location.
/// (llvm-project issue 179045; MLIR's main branch diagnoses it since pull
/// request 179075, 22.1.8 does not.)
/// One pass: MLIR resolves only aliases defined above their use (a later
/// one is its own error, "undefined symbol alias id").
static bool checkDenseArrayTypes(const llvm::SourceMgr &sources, llvm::raw_ostream &errors) {
  llvm::StringRef text = sources.getMemoryBuffer(sources.getMainFileID())->getBuffer();
  if (text.starts_with("ML\xefR") || !text.contains("array"))
    return true;
  // `!name = type`: the first token of what each alias names.
  llvm::StringMap<llvm::StringRef> aliases;
  auto isIndex = [&](llvm::StringRef type) {
    for (int depth = 0; depth < 64 && type.starts_with("!"); ++depth) {
      auto it = aliases.find(type);
      if (it == aliases.end())
        return false;
      type = it->second;
    }
    return type == "index";
  };
  bool ok = true;
  llvm::StringRef last[2];
  forEachToken(text, [&](llvm::StringRef token, size_t at) {
    if (last[0].starts_with("!") && last[1] == "=")
      aliases.try_emplace(last[0], token);
    if (last[0] == "array" && last[1] == "<" && isIndex(token)) {
      sources.PrintMessage(errors, llvm::SMLoc::getFromPointer(text.data() + at),
                           llvm::SourceMgr::DK_Error,
                           "a dense array's elements must be integers or floats, not index");
      ok = false;
    }
    last[0] = last[1];
    last[1] = token;
  });
  return ok;
}

OwningOpRef<ModuleOp> parseIr(std::unique_ptr<llvm::MemoryBuffer> buffer, MLIRContext &context,
                              llvm::raw_ostream &errors) {
  if (!checkResourceAlignments(buffer->getBuffer(), errors))
    return nullptr;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  if (!checkDenseArrayTypes(sources, errors))
    return nullptr;
  // Parse errors with their line and column.
  SourceMgrDiagnosticHandler handler(sources, &context, errors);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, ParserConfig(&context));
  if (!module)
    errors << "  not valid MLIR (see above)\n";
  return module;
}

namespace {
class IrFileSource : public ModelSource {
public:
  explicit IrFileSource(llvm::StringRef path) : file(path.str()) {}
  std::string path() const override { return file; }

  OwningOpRef<ModuleOp> load(MLIRContext &context, llvm::raw_ostream &errors) override {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/true);
    if (!buffer) {
      errors << "  cannot read '" << file << "': " << buffer.getError().message() << "\n";
      return nullptr;
    }
    return parseIr(std::move(*buffer), context, errors);
  }

private:
  std::string file;
};
} // namespace

std::unique_ptr<ModelSource> createIrFileSource(llvm::StringRef path) {
  return std::make_unique<IrFileSource>(path);
}

} // namespace kiln::driver
