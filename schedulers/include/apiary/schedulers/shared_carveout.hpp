// How much of an SM's unified L1/shared memory a persistent kernel asks to be shared memory: just
// what its resident blocks take, so that the rest stays L1. The driver's default carveout gives
// shared memory room for as many blocks as the kernel's occupancy allows, whether or not the
// launch has that many per SM; the megakernel often runs fewer (megakernel.blocks_per_sm, a
// graph's held tasks). The arithmetic alone, so that host tests check it.
//
// The carveout is a percentage of the largest shared memory an SM offers; the driver rounds it
// up to the next capacity the SM supports (CUDA Programming Guide, "Shared Memory" for compute
// capability 7.x and later), so the blocks still fit.
#pragma once

#include <cstdint>

namespace apiary {

// The shared memory `per_sm` blocks take on an SM: each its static and dynamic shared memory and
// the part the system reserves per block.
constexpr std::uint64_t resident_shared_bytes(std::uint32_t per_sm, std::uint64_t block_shared,
                                              std::uint64_t reserved_per_block) {
  return std::uint64_t(per_sm) * (block_shared + reserved_per_block);
}

// The smallest carveout (percent of `max_shared_per_sm`) that holds `bytes` of shared memory:
// 100 where it needs all of it or more (the launch then fails or fits as it did without a
// preference), 0 where the blocks need none.
constexpr int carveout_percent_for(std::uint64_t bytes, std::uint64_t max_shared_per_sm) {
  if (max_shared_per_sm == 0 || bytes >= max_shared_per_sm) return 100;
  return int((bytes * 100 + max_shared_per_sm - 1) / max_shared_per_sm);
}

}  // namespace apiary
