//===- ModelSource.h - where the driver's kiln IR comes from ----*- C++ -*-===//
//
// The one interface between the compile driver and the frontends: a
// frontend implements it (frontends/onnx/OnnxSource), the driver calls it.
// Header only, so a frontend depends on no compiler library.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_MODELSOURCE_H
#define KILN_COMPILER_DRIVER_MODELSOURCE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln::driver {

/// Where a model's kiln IR comes from: a frontend (the ONNX importer in
/// process) or a file of kiln IR (`kiln import`, the PyTorch tracer).
class ModelSource {
public:
  virtual ~ModelSource() = default;
  /// The model's file, for messages.
  virtual std::string path() const = 0;
  /// Dialects the source's IR uses, added before the context is created.
  virtual void registerDialects(mlir::DialectRegistry &registry) const {}
  /// The model as kiln IR honouring the import contract
  /// (docs/Contracts.md), or null after explaining why to `errors`.
  virtual mlir::OwningOpRef<mlir::ModuleOp> load(mlir::MLIRContext &context,
                                                 llvm::raw_ostream &errors) = 0;
};

} // namespace kiln::driver

#endif // KILN_COMPILER_DRIVER_MODELSOURCE_H
