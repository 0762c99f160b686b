// Unit tests of kiln's shape arithmetic (dialects/kiln/Utils/ShapeMath),
// including a property test of broadcasting against a brute-force rule.
#include "dialects/kiln/Utils/ShapeMath.h"

#include <catch2/catch.hpp>

#include <random>

using namespace kiln::shape;
constexpr int64_t Q = kDynamic;

TEST_CASE("broadcast follows numpy", "[shape]") {
  CHECK(broadcast({{4, 1}, {3}}).dims == Dims{4, 3});
  CHECK(broadcast({{2, 1, 5}, {7, 1}}).dims == Dims{2, 7, 5});
  CHECK(broadcast({{}, {3, 2}}).dims == Dims{3, 2});
  CHECK(broadcast({{1}, {1}}).dims == Dims{1});
  CHECK(broadcast({{0, 1}, {1, 4}}).dims == Dims{0, 4});
  CHECK(broadcast({{Q, 3}, {1, 3}}).dims == Dims{Q, 3});
  CHECK(broadcast({{Q, 3}, {5, 3}}).dims == Dims{5, 3});
  CHECK(broadcast({{Q}, {Q}}).dims == Dims{Q});
  CHECK(broadcast({{2, 3}, {Q, 1}, {1}}).dims == Dims{2, 3});
  ShapeOrError bad = broadcast({{2, 3}, {4, 3}});
  CHECK_FALSE(bad.ok());
  CHECK(bad.error.find("do not broadcast") != std::string::npos);
}

TEST_CASE("broadcast agrees with a brute-force rule on random shapes",
          "[shape][property]") {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> rankDist(0, 4), dimDist(0, 3);
  for (int trial = 0; trial < 2000; ++trial) {
    Dims a(rankDist(rng)), b(rankDist(rng));
    for (int64_t &d : a)
      d = dimDist(rng);
    for (int64_t &d : b)
      d = dimDist(rng);
    // Brute force: pad with 1s, then each dim pair must be equal or hold a 1.
    size_t rank = std::max(a.size(), b.size());
    Dims pa(rank - a.size(), 1), pb(rank - b.size(), 1);
    pa.insert(pa.end(), a.begin(), a.end());
    pb.insert(pb.end(), b.begin(), b.end());
    bool compatible = true;
    Dims expected(rank);
    for (size_t i = 0; i < rank; ++i) {
      if (pa[i] != pb[i] && pa[i] != 1 && pb[i] != 1)
        compatible = false;
      expected[i] = pa[i] == 1 ? pb[i] : pa[i];
    }
    ShapeOrError got = broadcast({a, b});
    REQUIRE(got.ok() == compatible);
    if (compatible)
      REQUIRE(got.dims == expected);
  }
}

TEST_CASE("window output sizes match conv and pooling rules", "[shape]") {
  // resnet stem: 224, k7 s2 p3 -> 112; max pool k3 s2 p1 -> 56
  CHECK(windowOutput(224, 7, 2, 3, 3, 1, false).dims == Dims{112});
  CHECK(windowOutput(112, 3, 2, 1, 1, 1, false).dims == Dims{56});
  // dilation 2 makes a 3-tap kernel span 5
  CHECK(windowOutput(10, 3, 1, 0, 0, 2, false).dims == Dims{6});
  // ceil mode rounds up: (5 - 2) / 2 = 1.5 -> 2 windows + 1
  CHECK(windowOutput(5, 2, 2, 0, 0, 1, false).dims == Dims{2});
  CHECK(windowOutput(5, 2, 2, 0, 0, 1, true).dims == Dims{3});
  // ceil mode never starts a window in the high padding
  CHECK(windowOutput(4, 2, 2, 0, 1, 1, true).dims == Dims{2});
  CHECK(windowOutput(Q, 3, 1, 1, 1, 1, false).dims == Dims{Q});
  CHECK_FALSE(windowOutput(2, 5, 1, 0, 0, 1, false).ok());
  CHECK_FALSE(windowOutput(8, 3, 0, 0, 0, 1, false).ok());
  CHECK_FALSE(windowOutput(8, 3, 1, -1, 0, 1, false).ok());
}

TEST_CASE("reshape resolves 0 and -1", "[shape]") {
  CHECK(reshape({2, 3, 4}, {6, -1}).dims == Dims{6, 4});
  CHECK(reshape({2, 3, 4}, {0, -1}).dims == Dims{2, 12});
  CHECK(reshape({Q, 128, 768}, {0, 0, 12, 64}).dims == Dims{Q, 128, 12, 64});
  CHECK(reshape({Q, 128, 768}, {0, -1, 64}).dims == Dims{Q, Q, 64});
  CHECK(reshape({Q, 4}, {-1}).dims == Dims{Q});
  CHECK(reshape({0, 4}, {-1, 2}).dims == Dims{0, 2}); // numpy allows this
  CHECK_FALSE(reshape({0, 4}, {0, -1}).ok());          // -1 next to a 0 size
  CHECK_FALSE(reshape({2, 3}, {-1, -1}).ok());
  CHECK_FALSE(reshape({2, 3}, {4, 2}).ok());
  CHECK_FALSE(reshape({2, 3}, {5, -1}).ok());
  CHECK_FALSE(reshape({2, 3}, {1, 1, 0}).ok());
  CHECK_FALSE(reshape({2, 3}, {-2, 3}).ok());
}

TEST_CASE("slice extents follow ONNX clamping", "[shape]") {
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  constexpr int64_t small = std::numeric_limits<int64_t>::min();
  CHECK(sliceExtent(10, 0, big, 1) == 10);
  CHECK(sliceExtent(10, 1, big, 2) == 5);
  CHECK(sliceExtent(10, -3, big, 1) == 3);
  CHECK(sliceExtent(10, 2, 1, 1) == 0);
  CHECK(sliceExtent(10, -1, small, -1) == 10); // full reverse
  CHECK(sliceExtent(10, 9, 0, -3) == 3);       // 9, 6, 3
  CHECK(sliceExtent(10, 100, -100, -1) == 10);
  CHECK(sliceExtent(Q, 0, 3, 1) == Q);
  CHECK(sliceExtent(0, 0, big, 1) == 0);
}

TEST_CASE("numElements", "[shape]") {
  CHECK(numElements({}) == 1);
  CHECK(numElements({2, 3, 4}) == 24);
  CHECK(numElements({2, Q}) == Q);
  CHECK(numElements({0, 5}) == 0);
}

TEST_CASE("strides are row-major", "[shape]") {
  CHECK(strides({2, 3, 4}) == Dims{12, 4, 1});
  CHECK(strides({5}) == Dims{1});
  CHECK(strides({}).empty());
}

TEST_CASE("swapsLastTwo recognises a (batched) matrix transpose", "[shape]") {
  CHECK(swapsLastTwo({1, 0}));
  CHECK(swapsLastTwo({0, 2, 1}));
  CHECK(swapsLastTwo({0, 1, 3, 2}));
  CHECK_FALSE(swapsLastTwo({0, 1}));
  CHECK_FALSE(swapsLastTwo({1, 0, 2}));
  CHECK_FALSE(swapsLastTwo({1, 0, 3, 2}));
  CHECK_FALSE(swapsLastTwo({0}));
  CHECK_FALSE(swapsLastTwo({}));
}
