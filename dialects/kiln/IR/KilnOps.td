//===- KilnOps.td - every kiln op, by family -*- tablegen -*-===//
//
// One TableGen unit for all ops; each family lives in its own file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialects/kiln/IR/KilnDialect.td"
include "dialects/kiln/IR/KilnElementwiseOps.td"
include "dialects/kiln/IR/KilnNNOps.td"
include "dialects/kiln/IR/KilnShapeOps.td"
include "dialects/kiln/IR/KilnKernelOps.td"
include "dialects/kiln/IR/KilnStringOps.td"

#endif // KILN_OPS_TD
