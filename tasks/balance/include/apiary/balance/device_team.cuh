// Device teams: a whole CUDA block, or a cooperative-groups tile of any power-of-two size
// up to 32 (seed 000, 4.4.2.3: group sizes chosen per problem).
#pragma once

#include <apiary/balance/processors.hpp>

#include <cooperative_groups.h>

namespace apiary::balance {

// The block (1-D). Its size must be a multiple of 32 for warp-level phases.
struct BlockTeam {
  __device__ unsigned rank() const { return threadIdx.x; }
  __device__ unsigned size() const { return blockDim.x; }
  __device__ void sync() const { __syncthreads(); }
  __device__ unsigned warp_size() const { return blockDim.x < 32 ? blockDim.x : 32u; }
  __device__ void sync_warp() const { __syncwarp(); }
};

// A thread_block_tile<N> (N <= 32) as a team of its own.
template <unsigned N>
struct TileTeam {
  cooperative_groups::thread_block_tile<N> tile;
  __device__ unsigned rank() const { return tile.thread_rank(); }
  __device__ unsigned size() const { return N; }
  __device__ void sync() const { tile.sync(); }
  __device__ unsigned warp_size() const { return N; }
  __device__ void sync_warp() const { tile.sync(); }
};

// The grid of a plain 1-D kernel: one team per block.
__device__ inline Processors<BlockTeam> grid_processors() { return {BlockTeam{}, blockIdx.x, gridDim.x}; }

// Tiles of N threads as teams over the whole grid (e.g. warp-sized teams for schedules that
// should not synchronise whole blocks).
template <unsigned N>
__device__ Processors<TileTeam<N>> tile_processors() {
  auto block = cooperative_groups::this_thread_block();
  auto tile = cooperative_groups::tiled_partition<N>(block);
  const unsigned per_block = blockDim.x / N;
  return {TileTeam<N>{tile}, blockIdx.x * per_block + threadIdx.x / N, gridDim.x * per_block};
}

}  // namespace apiary::balance
