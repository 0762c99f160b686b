//===- Packing.cpp - offsets of buffers in one arena ----------------------===//
//
// Both strategies place one buffer at a time against the already placed
// buffers whose lifetimes intersect it; they differ in the order buffers
// come in and in which gap they take. O(n^2) in the number of buffers,
// which is a few hundred for the largest models.
//
//===----------------------------------------------------------------------===//

#include "compiler/Memory/Packing.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln::memory {

namespace {

int64_t roundUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

bool intersect(const BufferLifetime &a, const BufferLifetime &b) {
  return a.first <= b.last && b.first <= a.last;
}

/// The placed intervals [offset, offset + size) that meet buffer `i`'s
/// lifetime, sorted by offset.
std::vector<std::pair<int64_t, int64_t>>
conflicts(const std::vector<BufferLifetime> &buffers, const std::vector<int64_t> &offsets,
          const std::vector<bool> &placed, size_t i, int64_t alignment) {
  std::vector<std::pair<int64_t, int64_t>> taken;
  for (size_t j = 0; j < buffers.size(); ++j)
    if (placed[j] && intersect(buffers[i], buffers[j]))
      taken.push_back({offsets[j], offsets[j] + roundUp(buffers[j].size, alignment)});
  std::sort(taken.begin(), taken.end());
  return taken;
}

/// Places buffers in `order`; `bestFit` takes the smallest gap that fits
/// instead of the lowest.
std::vector<int64_t> placeInOrder(const std::vector<BufferLifetime> &buffers,
                                  const std::vector<size_t> &order, int64_t alignment,
                                  bool bestFit) {
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<bool> placed(buffers.size(), false);
  for (size_t i : order) {
    int64_t size = roundUp(buffers[i].size, alignment);
    int64_t chosen = -1, chosenGap = -1, cursor = 0;
    for (auto [begin, end] : conflicts(buffers, offsets, placed, i, alignment)) {
      int64_t gap = begin - cursor;
      if (gap >= size && (chosen < 0 || (bestFit && gap < chosenGap))) {
        chosen = cursor;
        chosenGap = gap;
        if (!bestFit)
          break;
      }
      cursor = std::max(cursor, end);
    }
    offsets[i] = chosen >= 0 ? chosen : cursor;
    placed[i] = true;
  }
  return offsets;
}

class GreedyBySize : public PackingStrategy {
public:
  std::string name() const override { return "greedy-by-size"; }
  std::vector<int64_t> pack(const std::vector<BufferLifetime> &buffers,
                            int64_t alignment) const override {
    std::vector<size_t> order(buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return buffers[a].size > buffers[b].size;
    });
    return placeInOrder(buffers, order, alignment, /*bestFit=*/false);
  }
};

class BestFitByTime : public PackingStrategy {
public:
  std::string name() const override { return "best-fit-by-time"; }
  std::vector<int64_t> pack(const std::vector<BufferLifetime> &buffers,
                            int64_t alignment) const override {
    std::vector<size_t> order(buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return buffers[a].first < buffers[b].first;
    });
    return placeInOrder(buffers, order, alignment, /*bestFit=*/true);
  }
};

} // namespace

std::unique_ptr<PackingStrategy> createGreedyBySize() { return std::make_unique<GreedyBySize>(); }
std::unique_ptr<PackingStrategy> createBestFitByTime() {
  return std::make_unique<BestFitByTime>();
}

int64_t livenessLowerBound(const std::vector<BufferLifetime> &buffers, int64_t alignment) {
  // Sweep over positions: +size at first, -size after last.
  std::map<int64_t, int64_t> delta;
  for (const BufferLifetime &b : buffers) {
    delta[b.first] += roundUp(b.size, alignment);
    delta[b.last + 1] -= roundUp(b.size, alignment);
  }
  int64_t live = 0, peak = 0;
  for (auto [position, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return peak;
}

bool isValidPacking(const std::vector<BufferLifetime> &buffers,
                    const std::vector<int64_t> &offsets, int64_t alignment) {
  if (offsets.size() != buffers.size())
    return false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (offsets[i] < 0 || offsets[i] % alignment != 0)
      return false;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!intersect(buffers[i], buffers[j]) || buffers[i].size == 0 || buffers[j].size == 0)
        continue;
      int64_t iEnd = offsets[i] + buffers[i].size, jEnd = offsets[j] + buffers[j].size;
      if (offsets[i] < jEnd && offsets[j] < iEnd)
        return false;
    }
  }
  return true;
}

ArenaPlan planArena(const std::vector<BufferLifetime> &buffers, int64_t alignment,
                    const PackingStrategy &strategy) {
  ArenaPlan plan;
  plan.offsets = strategy.pack(buffers, alignment);
  for (size_t i = 0; i < buffers.size(); ++i) {
    int64_t size = roundUp(buffers[i].size, alignment);
    plan.arenaBytes = std::max(plan.arenaBytes, plan.offsets[i] + size);
    plan.naiveBytes += size;
  }
  plan.lowerBound = livenessLowerBound(buffers, alignment);
  return plan;
}

ArenaPlan planArenaBest(const std::vector<BufferLifetime> &buffers, int64_t alignment) {
  ArenaPlan best = planArena(buffers, alignment, *createGreedyBySize());
  ArenaPlan other = planArena(buffers, alignment, *createBestFitByTime());
  return other.arenaBytes < best.arenaBytes ? other : best;
}

} // namespace kiln::memory
