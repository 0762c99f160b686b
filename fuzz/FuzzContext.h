//===- FuzzContext.h - a fresh MLIR context per fuzz input ------*- C++ -*-===//
//
// Every fuzz target that builds IR takes a new context per input (nothing
// a hostile input uniqued or allocated outlives it), single-threaded, with
// the dialects the compile driver registers and every diagnostic dropped
// (a fuzzer's output is its findings, not the errors it provokes).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FUZZ_FUZZCONTEXT_H
#define KILN_FUZZ_FUZZCONTEXT_H

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace kiln::fuzz {

inline const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *all = [] {
    auto *r = new mlir::DialectRegistry;
    r->insert<KilnDialect>();
    mlir::registerAllDialects(*r);
    mlir::registerAllExtensions(*r);
    return r;
  }();
  return *all;
}

/// A context and a handler that swallows its diagnostics.
struct QuietContext {
  mlir::MLIRContext context{registry(), mlir::MLIRContext::Threading::DISABLED};
  mlir::ScopedDiagnosticHandler quiet{&context,
                                      [](mlir::Diagnostic &) { return mlir::success(); }};
  QuietContext() { context.loadDialect<KilnDialect, mlir::func::FuncDialect>(); }
};

/// The import contract's check, then the graph phase, as the compile
/// driver runs them on what a source hands it; failures are fine.
inline void runGraphPhase(mlir::MLIRContext &context, mlir::ModuleOp module) {
  mlir::PassManager pm(&context);
  kiln::buildImportCheck(pm);
  kiln::PipelineOptions options;
  options.stopAfter = kiln::Phase::Graph;
  kiln::buildPipeline(pm, options);
  (void)pm.run(module);
}

} // namespace kiln::fuzz

#endif // KILN_FUZZ_FUZZCONTEXT_H
