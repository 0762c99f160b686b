//===- Liveness.h - lifetimes of a block's buffers --------------*- C++ -*-===//
//
// Which allocations of a function's top-level block can live in the arena,
// and from which op to which op each is live. A buffer is live from its
// allocation to the last op (of the block, counting ops nested in it) that
// uses it or any view of it. A buffer that escapes (returned, yielded out
// of a region, or reached through an op this analysis does not know) is
// left out, as is one with dynamic dims.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_MEMORY_LIVENESS_H
#define KILN_COMPILER_MEMORY_LIVENESS_H

#include "compiler/Memory/Packing.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Block.h"

#include <vector>

namespace kiln::memory {

struct BlockLiveness {
  /// The allocations that may be planned, in block order, and their
  /// lifetimes (positions are op indices in the block; sizes in bytes).
  std::vector<mlir::memref::AllocOp> allocs;
  std::vector<BufferLifetime> lifetimes;
  /// Allocations of the block left to the runtime's pool.
  int64_t unplanned = 0;
};

BlockLiveness computeBlockLiveness(mlir::Block &block);

} // namespace kiln::memory

#endif // KILN_COMPILER_MEMORY_LIVENESS_H
