//===- Packing.h - offsets of buffers in one arena --------------*- C++ -*-===//
//
// Plain C++ (no MLIR): given each buffer's size and the interval of
// schedule positions during which it is live, choose offsets so that no two
// buffers live at the same time overlap, and report how the arena compares
// with the liveness lower bound and the naive sum. Strategies sit behind a
// small interface so others can be tried and compared.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_MEMORY_PACKING_H
#define KILN_COMPILER_MEMORY_PACKING_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::memory {

/// A buffer live from schedule position `first` to `last`, inclusive.
struct BufferLifetime {
  int64_t size = 0;
  int64_t first = 0;
  int64_t last = 0;
};

/// Where each buffer goes and what that costs.
struct ArenaPlan {
  std::vector<int64_t> offsets; ///< per buffer, a multiple of the alignment
  int64_t arenaBytes = 0;       ///< the arena's size
  int64_t lowerBound = 0;       ///< max over positions of the bytes live at once
  int64_t naiveBytes = 0;       ///< every buffer at its own offset
};

/// A packing strategy: offsets for buffers (sizes already rounded up to
/// `alignment`) such that buffers whose lifetimes intersect do not overlap.
class PackingStrategy {
public:
  virtual ~PackingStrategy() = default;
  virtual std::string name() const = 0;
  virtual std::vector<int64_t> pack(const std::vector<BufferLifetime> &buffers,
                                    int64_t alignment) const = 0;
};

/// Largest buffer first, each at the lowest offset that fits beside the
/// buffers already placed whose lifetimes intersect its own.
std::unique_ptr<PackingStrategy> createGreedyBySize();
/// Buffers in order of their first use, each in the smallest gap that fits
/// it (best fit), else at the lowest offset above everything it meets.
std::unique_ptr<PackingStrategy> createBestFitByTime();

/// Packs `buffers` with `strategy` (sizes rounded up to `alignment`) and
/// measures the result.
ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, int64_t alignment,
                    const PackingStrategy &strategy);
/// The smaller arena of every strategy above.
ArenaPlan planArenaBest(const std::vector<BufferLifetime> &buffers, int64_t alignment);

/// The largest number of bytes live at one position (sizes rounded up).
int64_t livenessLowerBound(const std::vector<BufferLifetime> &buffers, int64_t alignment);

/// Whether `offsets` keep every two buffers live at the same time apart.
bool isValidPacking(const std::vector<BufferLifetime> &buffers,
                    const std::vector<int64_t> &offsets, int64_t alignment);

} // namespace kiln::memory

#endif // KILN_COMPILER_MEMORY_PACKING_H
