// Unit tests of arena packing (compiler/Memory/Packing), including property
// tests on random lifetimes and sizes: no two buffers live at the same time
// overlap, and the arena lies between the liveness lower bound and the
// naive sum.
#include "compiler/Memory/Packing.h"

#include <catch2/catch.hpp>

#include <random>

using namespace kiln::memory;

static std::vector<std::unique_ptr<PackingStrategy>> strategies() {
  std::vector<std::unique_ptr<PackingStrategy>> all;
  all.push_back(createGreedyBySize());
  all.push_back(createBestFitByTime());
  return all;
}

TEST_CASE("packing reuses the bytes of dead buffers", "[memory]") {
  // a: [0,1], b: [1,2], c: [2,3]. a and c never meet, so they share bytes.
  std::vector<BufferLifetime> buffers = {{1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  for (const auto &strategy : strategies()) {
    ArenaPlan plan = planArena(buffers, 64, *strategy);
    INFO(strategy->name());
    CHECK(isValidPacking(buffers, plan.offsets, 64));
    CHECK(plan.arenaBytes == 2048);
    CHECK(plan.lowerBound == 2048);
    CHECK(plan.naiveBytes == 3072);
    CHECK(plan.offsets[0] == plan.offsets[2]);
  }
}

TEST_CASE("packing rounds sizes up to the alignment", "[memory]") {
  std::vector<BufferLifetime> buffers = {{1, 0, 0}, {65, 0, 0}};
  ArenaPlan plan = planArenaBest(buffers, 64);
  CHECK(plan.lowerBound == 64 + 128);
  CHECK(plan.arenaBytes == 64 + 128);
  for (int64_t offset : plan.offsets)
    CHECK(offset % 64 == 0);
}

TEST_CASE("packing handles no buffers and empty buffers", "[memory]") {
  CHECK(planArenaBest({}, 64).arenaBytes == 0);
  std::vector<BufferLifetime> empty = {{0, 0, 5}, {0, 1, 2}};
  ArenaPlan plan = planArenaBest(empty, 64);
  CHECK(plan.arenaBytes == 0);
  CHECK(isValidPacking(empty, plan.offsets, 64));
}

TEST_CASE("isValidPacking rejects overlapping live buffers", "[memory]") {
  std::vector<BufferLifetime> buffers = {{128, 0, 2}, {128, 1, 3}};
  CHECK_FALSE(isValidPacking(buffers, {0, 64}, 64));
  CHECK(isValidPacking(buffers, {0, 128}, 64));
  // Not live together: the same bytes are fine.
  std::vector<BufferLifetime> apart = {{128, 0, 1}, {128, 2, 3}};
  CHECK(isValidPacking(apart, {0, 0}, 64));
}

TEST_CASE("packing random lifetimes never overlaps live buffers", "[memory][property]") {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> count(1, 60), start(0, 100), length(0, 30);
  std::uniform_int_distribution<int64_t> size(1, 1 << 20);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<BufferLifetime> buffers(count(rng));
    for (BufferLifetime &b : buffers) {
      b.size = size(rng);
      b.first = start(rng);
      b.last = b.first + length(rng);
    }
    for (const auto &strategy : strategies()) {
      ArenaPlan plan = planArena(buffers, 64, *strategy);
      INFO(strategy->name() << ", trial " << trial);
      REQUIRE(isValidPacking(buffers, plan.offsets, 64));
      CHECK(plan.arenaBytes >= plan.lowerBound);
      CHECK(plan.arenaBytes <= plan.naiveBytes);
    }
  }
}

TEST_CASE("a chain of buffers packs near the lower bound", "[memory][property]") {
  // Each buffer is live with its neighbours only (a plain network's
  // activations). The optimum is the lower bound (alternate buffers from
  // the two ends of the arena); the greedy strategies stay within 20%.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> size(1, 4096);
  std::vector<BufferLifetime> chain;
  for (int i = 0; i < 50; ++i)
    chain.push_back({size(rng) * 64, i, i + 1});
  ArenaPlan plan = planArenaBest(chain, 64);
  CHECK(isValidPacking(chain, plan.offsets, 64));
  CHECK(plan.arenaBytes * 100 <= plan.lowerBound * 120);
}
