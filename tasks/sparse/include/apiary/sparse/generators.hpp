// Matrix generators: the analogues of the SuiteSparse inputs that cannot be downloaded here.
// All are deterministic functions of their parameters and seed (counter-based randomness via
// apiary::mix64), independent of the number of host threads used to build them; large
// matrices are built in parallel so that a 10^8-entry matrix takes seconds, not minutes.
// Rows come out sorted by column, without duplicates.
#pragma once

#include <apiary/sparse/formats.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary::sparse {

// Finite-difference Laplacians on nx*ny (*nz) grids with Dirichlet boundaries: symmetric,
// diagonally dominant, positive definite. 2D: points 5 or 9; 3D: points 7 or 27.
Csr<double> laplacian_2d(index_t nx, index_t ny, int points = 5);
Csr<double> laplacian_3d(index_t nx, index_t ny, index_t nz, int points = 7);

// A uniformly random permutation (Fisher-Yates from a counter-based generator).
std::vector<index_t> random_permutation(index_t n, std::uint64_t seed);
// B = P A P^T: row i of B is row perm[i] of A, columns renamed by the inverse permutation.
Csr<double> permute_symmetric(const Csr<double>& a, const std::vector<index_t>& perm);

// R-MAT / Kronecker power-law graph with 2^scale vertices and edge_factor * 2^scale sampled
// edges (quadrant probabilities a, b, c, d = 1 - a - b - c; Graph500 uses 0.57/0.19/0.19).
// Vertex labels are randomly permuted (as Graph500 does) so that degree does not follow the
// label. symmetric = true stores each edge both ways. Duplicates and self loops are removed.
Csr<double> rmat(int scale, double edge_factor, double a, double b, double c, std::uint64_t seed,
                 bool symmetric = true);

// Symmetric, strictly diagonally dominant random matrix with about avg_row entries per row
// (the shape of the thesis's Jacobi inputs A3..A6: n = 10000/10000/20000/32000 with 11/21/27/14).
Csr<double> diagonally_dominant(index_t n, double avg_row, std::uint64_t seed);

// Rows whose lengths follow a Pareto law with shape `alpha` (smaller = heavier tail), mean
// about avg_row, capped at max_row; uniformly random columns (web crawls, citation graphs).
Csr<double> power_law_rows(index_t n, double avg_row, double alpha, index_t max_row, std::uint64_t seed);

// Circuit-like: short banded rows (about avg_row entries around the diagonal) plus num_long
// rows holding up to long_len entries each (circuit5M has one row with 1.29M entries).
Csr<double> long_rows(index_t n, double avg_row, index_t num_long, index_t long_len, std::uint64_t seed);

// Every row has exactly k distinct random columns (the "regular8" input with k = 8).
Csr<double> regular_rows(index_t n, index_t k, std::uint64_t seed);

// Road-network-like: an nx*ny grid graph keeping each edge with probability `keep`
// (average degree ~4*keep, maximum 4, strong locality); no diagonal.
Csr<double> road_network(index_t nx, index_t ny, double keep, std::uint64_t seed);

// Builds a matrix from a spec string "kind:key=value,key=value", e.g.
//   lap2d:n=1000,points=5     lap3d:nx=100,ny=100,nz=100,points=27     rmat:scale=20,ef=16
//   diagdom:n=10000,avg=11    powerlaw:n=1e6,avg=5,alpha=1.8,max=3445   regular:n=1e6,k=8
//   longrows:n=1e6,avg=10,long=4,len=200000    road:nx=2000,ny=2000,keep=0.53
//   A3 | A4 | A5 | A6 (the thesis's Jacobi shapes)
// Common keys: seed=N, perm=1 (apply a random symmetric permutation afterwards).
// Numbers accept exponents ("1e6"). Unknown kinds or keys throw InputError naming the spec.
Csr<double> generate(const std::string& spec);

// Number of host threads the generators use (default: hardware concurrency).
void set_generator_threads(unsigned threads);

}  // namespace apiary::sparse
