//===- KilnOps.cpp - generated op definitions -----------------------------===//
//
// Instantiates the ODS-generated op classes. The hand-written parts of each
// family (shape inference, verifiers, folders) live in Kiln<Family>Ops.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kiln;

#define GET_OP_CLASSES
#include "dialects/kiln/IR/KilnOps.cpp.inc"
