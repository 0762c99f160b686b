//===- IrFileSource.cpp - kiln IR from a .mlir or .mlirbc file ------------===//

#include "compiler/Driver/Driver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace kiln::driver {

bool isIrFile(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".mlir" || ext == ".mlirbc";
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
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    // Parse errors with their line and column.
    SourceMgrDiagnosticHandler handler(sources, &context, errors);
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, ParserConfig(&context));
    if (!module)
      errors << "  not valid MLIR (see above)\n";
    return module;
  }

private:
  std::string file;
};
} // namespace

std::unique_ptr<ModelSource> createIrFileSource(llvm::StringRef path) {
  return std::make_unique<IrFileSource>(path);
}

} // namespace kiln::driver
