//===- ExportLibraryWeights.cpp - name library calls' constant weights ----===//
//
// See Passes.td (kiln-export-library-weights).
//
//===----------------------------------------------------------------------===//

#include "backends/cpu/Passes.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace kiln::cpu {

#define GEN_PASS_DEF_EXPORTLIBRARYWEIGHTS
#include "backends/cpu/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kCallPrefix = "kiln_library_call_";

struct ExportLibraryWeightsPass
    : impl::ExportLibraryWeightsBase<ExportLibraryWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::DenseMap<Operation *, StringAttr> named; // global -> new name
    SmallVector<NamedAttribute> entries;
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(kCallPrefix) && call.getNumOperands() >= 2)
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      auto get = call.getOperand(1).getDefiningOp<memref::GetGlobalOp>();
      if (!get)
        continue;
      auto global = symbols.lookup<memref::GlobalOp>(get.getName());
      if (!global || !global.getConstant() || !global.getInitialValue())
        continue;
      auto [it, inserted] = named.try_emplace(global, StringAttr());
      if (inserted) {
        std::string name = (kLibraryWeightsPrefix + llvm::Twine(named.size() - 1)).str();
        if (failed(symbols.rename(global, name))) {
          global.emitError("cannot rename the weights of a library call");
          return signalPassFailure();
        }
        global.setPublic();
        it->second = global.getSymNameAttr();
      }
      entries.push_back(NamedAttribute(
          StringAttr::get(&getContext(), call.getCallee().drop_front(kCallPrefix.size())),
          FlatSymbolRefAttr::get(it->second)));
    }
    if (!entries.empty())
      module->setAttr(kLibraryWeightsAttr, DictionaryAttr::get(&getContext(), entries));
  }
};

} // namespace

} // namespace kiln::cpu
