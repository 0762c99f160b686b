//===- Backward.h - which ops belong to a backward pass ---------*- C++ -*-===//
//
// kiln-differentiate wraps the location of every op it creates in a
// NameLoc "kiln.backward" (the forward op's location inside it, so reports
// still name the model's node). Later phases read the mark through
// fusion and lowering (a fused location keeps it): kiln-rematerialize
// finds the forward values the backward pass reads, kiln-plan-memory where
// the backward pass starts (the buffers live across that point are the
// activations saved for it), the compile report which kernels are
// backward. docs/Contracts.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_AUTODIFF_BACKWARD_H
#define KILN_COMPILER_AUTODIFF_BACKWARD_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

namespace kiln::autodiff {

inline constexpr llvm::StringLiteral kBackwardMark = "kiln.backward";

/// `loc` marked as part of a backward pass.
inline mlir::Location markBackward(mlir::Location loc) {
  return mlir::NameLoc::get(mlir::StringAttr::get(loc->getContext(), kBackwardMark), loc);
}

/// Whether `loc` (or a location fused into it) carries the mark.
inline bool isBackward(mlir::Location loc) {
  bool found = false;
  loc->walk([&](mlir::Location l) {
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(l))
      found |= name.getName() == kBackwardMark;
    return found ? mlir::WalkResult::interrupt() : mlir::WalkResult::advance();
  });
  return found;
}

} // namespace kiln::autodiff

#endif // KILN_COMPILER_AUTODIFF_BACKWARD_H
