//===- IrFileSource.cpp - kiln IR from a .mlir or .mlirbc file ------------===//

#include "compiler/Driver/Driver.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
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

/// The module attributes that name an external weights file and its index.
constexpr llvm::StringLiteral kWeightsFile = "kiln.weights_file";
constexpr llvm::StringLiteral kWeightsIndex = "kiln.weights";
/// Every blob's offset in the weights file is a multiple of this (the
/// file is mapped at a page boundary), so any element's alignment holds.
constexpr uint64_t kWeightsAlignment = 64;

/// Every dense_resource value of the module, with the op that holds it.
using ResourceUses = SmallVector<std::pair<Operation *, DenseResourceElementsAttr>>;
static ResourceUses resourceUses(ModuleOp module) {
  ResourceUses uses;
  module.walk([&](Operation *op) {
    op->getAttrDictionary().walk(
        [&](DenseResourceElementsAttr value) { uses.emplace_back(op, value); });
  });
  return uses;
}

/// Maps the weights file the module names (relative to `folder`) and gives
/// each entry of its index ({key = array<i64: offset, size>}) to the
/// `dense_resource` blob of that key, without a copy: the blobs keep the
/// mapping alive. The two attributes are then removed.
static bool loadExternalWeights(ModuleOp module, const ResourceUses &uses,
                                llvm::StringRef folder, llvm::raw_ostream &errors) {
  Attribute fileAttr = module->getAttr(kWeightsFile);
  Attribute indexAttr = module->getAttr(kWeightsIndex);
  if (!fileAttr && !indexAttr)
    return true;
  auto file = dyn_cast_or_null<StringAttr>(fileAttr);
  auto index = dyn_cast_or_null<DictionaryAttr>(indexAttr);
  if (!file || !index) {
    errors << "  external weights need both " << kWeightsFile << " (a string) and "
           << kWeightsIndex << " (a dictionary)\n";
    return false;
  }
  if (folder.empty()) {
    errors << "  the module names the weights file '" << file.getValue()
           << "', but it was not read from a file whose folder holds it\n";
    return false;
  }
  llvm::StringRef name = file.getValue();
  if (name.empty() || llvm::sys::path::is_absolute(name) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(name), llvm::sys::path::end(name)),
                   [](llvm::StringRef part) { return part == ".."; })) {
    errors << "  the weights file '" << file.getValue()
           << "' must be a path inside the model's folder\n";
    return false;
  }
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, file.getValue());
  auto mapped = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!mapped) {
    errors << "  cannot read the weights file '" << path << "': " << mapped.getError().message()
           << "\n";
    return false;
  }
  std::shared_ptr<llvm::MemoryBuffer> data = std::move(*mapped);
  // Each blob declares its element's size as its alignment, as MLIR's text
  // and kiln_torch's hex do, so that the module (and its content hash) is
  // the same whichever way the bytes came.
  llvm::StringMap<uint64_t> alignmentOf;
  for (auto [op, value] : uses) {
    Type element = value.getType().getElementType();
    uint64_t bytes = element.isIntOrFloat() ? (element.getIntOrFloatBitWidth() + 7) / 8 : 1;
    alignmentOf.try_emplace(value.getRawHandle().getKey(), std::max<uint64_t>(bytes, 1));
  }
  uint64_t fileSize = data->getBufferSize();
  DialectResourceBlobManager &manager =
      DenseResourceElementsHandle::getManagerInterface(module.getContext()).getBlobManager();
  bool ok = true;
  for (NamedAttribute entry : index) {
    llvm::StringRef key = entry.getName().getValue();
    auto range = dyn_cast<DenseI64ArrayAttr>(entry.getValue());
    if (!range || range.size() != 2 || range[0] < 0 || range[1] < 0) {
      errors << "  weights entry '" << key << "' must be array<i64: offset, size>\n";
      ok = false;
      continue;
    }
    uint64_t offset = range[0], size = range[1];
    if (offset > fileSize || size > fileSize - offset || offset % kWeightsAlignment != 0) {
      errors << "  weights entry '" << key << "' (offset " << offset << ", " << size
             << " bytes) is not a " << kWeightsAlignment << "-byte aligned part of '" << path
             << "' (" << fileSize << " bytes)\n";
      ok = false;
      continue;
    }
    DialectResourceBlobManager::BlobEntry *blob = manager.lookup(key);
    if (!blob) {
      errors << "  weights entry '" << key << "' names no dense_resource of the module\n";
      ok = false;
      continue;
    }
    if (blob->getBlob()) {
      errors << "  dense_resource '" << key
             << "' has its bytes both in the file and in the weights file\n";
      ok = false;
      continue;
    }
    llvm::ArrayRef<char> bytes(data->getBufferStart() + offset, size);
    uint64_t alignment = alignmentOf.lookup(key);
    blob->setBlob(AsmResourceBlob(bytes, alignment ? alignment : kWeightsAlignment,
                                  [data](void *, size_t, size_t) {}, /*dataIsMutable=*/false));
  }
  module->removeAttr(kWeightsFile);
  module->removeAttr(kWeightsIndex);
  return ok;
}

/// Every dense_resource value has its bytes (else LLVM's translation
/// failed late with "resource does not exist"), each reported at its op.
static bool checkResourcesHaveData(const ResourceUses &uses, llvm::raw_ostream &errors) {
  bool ok = true;
  for (auto [op, value] : uses) {
    if (value.getRawHandle().getBlob())
      continue;
    errors << "  ";
    if (auto at = dyn_cast<FileLineColLoc>(op->getLoc()))
      errors << at.getFilename().getValue() << ":" << at.getLine() << ":" << at.getColumn();
    else
      op->getLoc().print(errors);
    errors << ": error: the bytes of dense_resource '" << value.getRawHandle().getKey()
           << "' are missing (no dialect_resources entry and no weights file gives them)\n";
    ok = false;
  }
  return ok;
}

OwningOpRef<ModuleOp> parseIr(std::unique_ptr<llvm::MemoryBuffer> buffer, MLIRContext &context,
                              llvm::raw_ostream &errors, llvm::StringRef folder) {
  if (!checkResourceAlignments(buffer->getBuffer(), errors))
    return nullptr;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  if (!checkDenseArrayTypes(sources, errors))
    return nullptr;
  // Parse errors with their line and column.
  SourceMgrDiagnosticHandler handler(sources, &context, errors);
  // Verified once the weights file's attributes are taken off (the kiln
  // dialect refuses kiln attributes it does not know).
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sources, ParserConfig(&context, /*verifyAfterParse=*/false));
  if (!module) {
    errors << "  not valid MLIR (see above)\n";
    return nullptr;
  }
  ResourceUses uses = resourceUses(*module);
  if (!loadExternalWeights(*module, uses, folder, errors))
    return nullptr;
  if (failed(verify(*module))) {
    errors << "  not valid MLIR (see above)\n";
    return nullptr;
  }
  if (!checkResourcesHaveData(uses, errors))
    return nullptr;
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
    llvm::SmallString<256> folder(file);
    llvm::sys::path::remove_filename(folder);
    if (folder.empty())
      folder = ".";
    return parseIr(std::move(*buffer), context, errors, folder);
  }

private:
  std::string file;
};
} // namespace

std::unique_ptr<ModelSource> createIrFileSource(llvm::StringRef path) {
  return std::make_unique<IrFileSource>(path);
}

} // namespace kiln::driver
