//===- ThreadPolicyTest.cpp - the runtime's choice of a run's thread count ===//
//
// runtime/src/thread_policy.c driven with made-up run times: what an idle
// machine, a busy core and a freed core look like to a session.
//
//===----------------------------------------------------------------------===//

#include "thread_policy.h"

#include <catch2/catch.hpp>

#include <vector>

namespace {

constexpr uint64_t ms = 1000000;

// One run at `signature`: the count the policy picks, timed `full` or
// `reduced` ns by which one it is.
int32_t step(kiln_thread_policy &p, uint64_t signature, uint64_t full, uint64_t reduced) {
  int32_t threads = kiln_thread_policy_choose(&p, signature);
  kiln_thread_policy_record(&p, threads == p.full ? full : reduced);
  return threads;
}

// The counts of `runs` runs.
std::vector<int32_t> steps(kiln_thread_policy &p, int runs, uint64_t full, uint64_t reduced,
                           uint64_t signature = 7) {
  std::vector<int32_t> counts;
  for (int i = 0; i < runs; ++i)
    counts.push_back(step(p, signature, full, reduced));
  return counts;
}

int count(const std::vector<int32_t> &counts, int32_t threads) {
  int n = 0;
  for (int32_t c : counts)
    n += c == threads;
  return n;
}

} // namespace

TEST_CASE("thread policy: the reduced count is half, at least one", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 8);
  CHECK(p.full == 8);
  CHECK(p.reduced == 4);
  kiln_thread_policy_init(&p, 3);
  CHECK(p.reduced == 1);
  kiln_thread_policy_init(&p, 0);
  CHECK(p.full == 1);
  CHECK(p.reduced == 1);
}

TEST_CASE("thread policy: one thread never changes", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 1);
  std::vector<int32_t> counts = steps(p, 100, 10 * ms, 5 * ms);
  CHECK(count(counts, 1) == 100);
  CHECK(p.tries == 0);
}

TEST_CASE("thread policy: an idle machine tries the reduced count once", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  std::vector<int32_t> counts = steps(p, 2000, 10 * ms, 20 * ms);
  // Two warm-up runs and a timed one at 2, the try at 1, then 2.
  CHECK(counts[0] == 2);
  CHECK(counts[1] == 2);
  CHECK(counts[2] == 2);
  CHECK(counts[3] == 1);
  CHECK(count(counts, 1) == 1);
  CHECK(p.tries == 1);
  CHECK(p.switches == 0);
  CHECK(p.runs == 2000);
  CHECK(p.reduced_runs == 1);
}

TEST_CASE("thread policy: noise under 1.5x the best makes no try", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  steps(p, 10, 10 * ms, 20 * ms);
  uint64_t tries = p.tries;
  for (int i = 0; i < 1000; ++i)
    CHECK(step(p, 7, (i % 3 ? 10 : 14) * ms, 20 * ms) == 2);
  // One run at 1.6x now and then, never two in a row.
  for (int i = 0; i < 100; ++i)
    CHECK(step(p, 7, (i % 2 ? 10 : 16) * ms, 20 * ms) == 2);
  CHECK(p.tries == tries);
}

TEST_CASE("thread policy: a busy core switches to the reduced count and back", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  steps(p, 20, 10 * ms, 20 * ms);
  REQUIRE(p.switches == 0);
  // The core gets busy: 2 threads take 40 ms, 1 thread 21 ms. Two slow
  // runs, then the try, which switches.
  CHECK(step(p, 7, 40 * ms, 21 * ms) == 2);
  CHECK(step(p, 7, 40 * ms, 21 * ms) == 2);
  CHECK(step(p, 7, 40 * ms, 21 * ms) == 1);
  CHECK(p.switches == 1);
  // At 1 thread the full count is tried after 1 run, then 2, 4, 8: it
  // keeps losing.
  std::vector<int> tries;
  for (int i = 1; i <= 1 + 2 + 4 + 8 + 4; ++i)
    if (step(p, 7, 40 * ms, 21 * ms) == 2)
      tries.push_back(i);
  CHECK(tries == std::vector<int>{2, 2 + 3, 2 + 3 + 5, 2 + 3 + 5 + 9});
  CHECK(p.switches == 1);
  // The core is free again: the next try of 2 threads wins.
  int i = 0;
  while (step(p, 7, 10 * ms, 21 * ms) == 1 && i < 100)
    ++i;
  CHECK(i <= 64);
  CHECK(p.switches == 2);
  std::vector<int32_t> after = steps(p, 200, 10 * ms, 21 * ms);
  CHECK(count(after, 2) == 200);
}

TEST_CASE("thread policy: a passing spike costs two runs on the reduced count", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  steps(p, 20, 10 * ms, 20 * ms);
  uint64_t reduced = p.reduced_runs;
  // Two slow runs at 2 threads (another process woke up for a moment),
  // then a try of 1 thread that beats them: a switch. The machine is idle
  // again: one more run at 1 thread, then 2 threads win back.
  CHECK(step(p, 7, 40 * ms, 20 * ms) == 2);
  CHECK(step(p, 7, 40 * ms, 20 * ms) == 2);
  CHECK(step(p, 7, 10 * ms, 20 * ms) == 1);
  CHECK(p.switches == 1);
  CHECK(step(p, 7, 10 * ms, 20 * ms) == 1);
  CHECK(step(p, 7, 10 * ms, 20 * ms) == 2);
  CHECK(p.switches == 2);
  std::vector<int32_t> after = steps(p, 100, 10 * ms, 20 * ms);
  CHECK(count(after, 2) == 100);
  CHECK(p.reduced_runs - reduced == 2);
}

TEST_CASE("thread policy: the try interval stops growing at 1024", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 4);
  steps(p, 4, 40 * ms, 21 * ms); // the first try (the 4th run) switches
  REQUIRE(p.reduced_now == 1);
  std::vector<int32_t> counts = steps(p, 20000, 40 * ms, 21 * ms);
  std::vector<size_t> at;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i] == 4)
      at.push_back(i);
  REQUIRE(at.size() > 9);
  CHECK(at[at.size() - 1] - at[at.size() - 2] == 1025);
  CHECK(p.reduced == 2);
}

TEST_CASE("thread policy: input shapes are timed apart", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  // Batch 1 takes 10 ms, batch 8 80 ms; alternating, neither looks slow
  // next to the other.
  for (int i = 0; i < 500; ++i) {
    step(p, 1, 10 * ms, 20 * ms);
    step(p, 8, 80 * ms, 160 * ms);
  }
  CHECK(p.tries == 1);
  CHECK(p.switches == 0);
}

TEST_CASE("thread policy: a shape's first runs are not timed", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  steps(p, 10, 10 * ms, 20 * ms, 1);
  uint64_t tries = p.tries;
  // A new shape: its first runs make primitives (slow), then steady.
  CHECK(step(p, 2, 500 * ms, 500 * ms) == 2);
  CHECK(step(p, 2, 500 * ms, 500 * ms) == 2);
  steps(p, 50, 30 * ms, 60 * ms, 2);
  CHECK(p.tries == tries);
}

TEST_CASE("thread policy: more shapes than it follows", "[runtime]") {
  kiln_thread_policy p;
  kiln_thread_policy_init(&p, 2);
  for (int i = 0; i < 1000; ++i)
    step(p, 1 + i % (KILN_THREAD_SHAPES + 1), (10 + i % 5) * ms, 25 * ms);
  CHECK(p.runs == 1000);
  CHECK(p.switches == 0);
}
