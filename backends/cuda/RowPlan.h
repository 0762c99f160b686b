//===- RowPlan.h - which rows and reductions run on lanes ------*- C++ -*-===//
//
// The analysis kiln-gpu-warp-rows rewrites by (RowPlan.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CUDA_ROWPLAN_H
#define KILN_BACKENDS_CUDA_ROWPLAN_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace kiln::cuda {

constexpr int64_t kWarp = 32;

/// How a linalg op of a row runs on the warp's lanes.
enum class Mode {
  Whole,       // every lane runs all of it (one element: a scalar of the row)
  Strided,     // element e of its iteration space on lane e % 32
  LaneReduced, // its one reduction dim strided, partials combined by shuffles
};

/// How a row runs on the warp: each linalg op's mode, and its lane-private
/// buffers (allocas of the row each lane holds its own elements of).
struct RowPlan {
  llvm::DenseMap<mlir::Operation *, Mode> modes;
  llvm::DenseSet<mlir::Value> lanePrivate;
  /// Elements of the row's largest strided or lane-reduced op.
  int64_t widest = 0;
};

/// Whether memrefs `a` and `b` may share memory: views of one buffer do,
/// unless both are parts of views of the arena at disjoint bytes (two
/// intermediates the memory plan placed apart).
bool mayAlias(mlir::Value a, mlir::Value b);

/// The op combining output `output` of reduction `op` with its element
/// (the one user of the output's block argument, yielded, with a neutral
/// element, on what one shuffle moves: f32 or i32), or null.
mlir::Operation *combinerOf(mlir::linalg::LinalgOp op, unsigned output);

/// How `row`'s body (a row kernel's row) runs on a warp, or failure if it
/// cannot as it is.
mlir::FailureOr<RowPlan> planRow(mlir::scf::ParallelOp row);

/// Whether `op`, a reduction at the top of a function (no row kernel
/// around it), runs better with a warp (or a block) an output element.
bool warpPerOutput(mlir::linalg::GenericOp op);

} // namespace kiln::cuda

#endif // KILN_BACKENDS_CUDA_ROWPLAN_H
