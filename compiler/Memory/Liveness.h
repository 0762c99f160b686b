//===- Liveness.h - lifetimes of a block's buffers --------------*- C++ -*-===//
//
// Which allocations of a function's top-level block can live in the arena,
// and from which op to which op each is live. A buffer is live from its
// allocation to the last op (of the block, counting ops nested in it) that
// uses it or any view of it. A buffer that escapes (returned, yielded out
// of a region, or reached through an op this analysis does not know) is
// left out, as is one with a dynamic dim that has no upper bound.
//
// Buffers share a slot (one lifetime, one offset) when an elementwise
// linalg.generic writes its result over an input that dies there: the
// result is written in place of the operand.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_MEMORY_LIVENESS_H
#define KILN_COMPILER_MEMORY_LIVENESS_H

#include "compiler/Memory/Packing.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <vector>

namespace kiln::memory {

struct LivenessOptions {
  /// When positive, dim 0 of every entry-block argument with a dynamic dim
  /// 0 is at most this (the runtime refuses larger batches), so buffers
  /// whose dynamic dims derive from it are planned at their largest size.
  int64_t maxBatch = 0;
};

struct BlockLiveness {
  /// The allocations that may be planned, in block order, and the slot
  /// each lives in.
  std::vector<mlir::memref::AllocOp> allocs;
  std::vector<size_t> slotOf;
  /// Each planned allocation's largest size in bytes.
  std::vector<int64_t> bytes;
  /// Each slot's lifetime (positions are op indices in the block; sizes in
  /// bytes, the largest a buffer in it can have).
  std::vector<BufferLifetime> lifetimes;
  /// Allocations of the block left to the runtime's pool.
  int64_t unplanned = 0;
  /// Planned allocations written in place of a dead operand's buffer.
  int64_t inPlace = 0;
  /// Planned allocations with dynamic dims (sized for `maxBatch`).
  int64_t bounded = 0;
};

BlockLiveness computeBlockLiveness(mlir::Block &block, const LivenessOptions &options = {});

/// The last position (`position`: each op of `block` by index) at which
/// an op of `block` (an op nested in it counts as its ancestor in `block`)
/// uses `buffer` or a view of it, deallocations of `buffer` aside with
/// `skipDeallocs`; the position of `buffer`'s defining op if nothing else
/// uses it; nullopt if it escapes (returned, yielded out of a region,
/// reached through an op that may return an alias, or used outside
/// `block`).
std::optional<int64_t> lastUse(mlir::Value buffer, mlir::Block &block,
                               const llvm::DenseMap<mlir::Operation *, int64_t> &position,
                               bool skipDeallocs = false);

} // namespace kiln::memory

#endif // KILN_COMPILER_MEMORY_LIVENESS_H
