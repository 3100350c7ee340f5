// The megakernel's shared memory carveout (shared_carveout.hpp): the smallest percentage of an
// SM's largest shared memory that holds the blocks it runs per SM.
#include <apiary/schedulers/shared_carveout.hpp>

#include <catch2/catch.hpp>

#include <random>

using namespace apiary;

TEST_CASE("carveout: the blocks per SM take their static and dynamic shared memory and the reserve", "[carveout]") {
  CHECK(resident_shared_bytes(3, 41696 + 144, 1024) == 3u * 42864u);
  CHECK(resident_shared_bytes(0, 41696, 1024) == 0);
  CHECK(resident_shared_bytes(1, 0, 1024) == 1024);
}

TEST_CASE("carveout: the smallest percentage that holds the bytes", "[carveout]") {
  // An H100/H200 SM offers up to 228 KiB; Jacobi's held tasks, 3 blocks of 41,840 B, need 56%.
  constexpr std::uint64_t sm = 233472;
  CHECK(carveout_percent_for(128592, sm) == 56);
  CHECK(carveout_percent_for(0, sm) == 0);
  CHECK(carveout_percent_for(1, sm) == 1);
  CHECK(carveout_percent_for(sm, sm) == 100);
  CHECK(carveout_percent_for(sm + 1, sm) == 100);
  CHECK(carveout_percent_for(1000, 0) == 100);  // no capacity known: all of it
  std::mt19937_64 rng(Catch::rngSeed());
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t max = 1 + rng() % (1u << 20), bytes = rng() % (max + 1);
    const int p = carveout_percent_for(bytes, max);
    CAPTURE(bytes, max, p);
    REQUIRE(p >= 0);
    REQUIRE(p <= 100);
    REQUIRE(std::uint64_t(p) * max >= bytes * 100);                // holds the bytes
    if (p > 0) REQUIRE(std::uint64_t(p - 1) * max < bytes * 100);  // and no percent less does
  }
}
