//===- main.cpp - kiln-opt: run Kiln passes on MLIR files ------------------===//

#include "backends/Registration.h"
#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Backend.h"
#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // kiln-opt is mlir-opt plus Kiln: every upstream dialect and pass, so that
  // the lowering pipelines and their tests can be run step by step.
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect>();
  kiln::autodiff::registerGradientRules(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllPasses();
  kiln::registerKilnPasses();
  kiln::registerAllBackends();
  kiln::registerPipelines();
  // What each backend's passes need (translations, interfaces), as the
  // compile driver registers it for the backend it runs.
  for (const std::string &name : kiln::registeredBackendNames())
    kiln::lookupBackend(name)->registerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
