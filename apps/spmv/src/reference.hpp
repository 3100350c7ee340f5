// CPU reference SpMV and the result check shared by the benchmark and the GPU tests.
#pragma once

#include <apiary/sparse/formats.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary::spmv {

// y = A x in double precision (multi-threaded), plus sum_j |a_ij x_j| per row for the
// error bound.
template <class T>
void reference_spmv(const sparse::Csr<T>& a, const std::vector<T>& x, std::vector<double>& y, std::vector<double>& magnitude);

// Random x in [-1, 1) from a seed (fresh per run: the caller passes a new seed).
template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed);

struct CheckResult {
  bool ok = true;
  double max_error = 0;    // max_i |y_i - ref_i| / (magnitude_i + tiny)
  std::int64_t bad_row = -1;
  double tolerance = 0;
  std::string message;
};

// |y_i - ref_i| <= tol * (sum_j |a_ij x_j|) + tiny, with tol = 1e-4 (fp32) or 1e-11 (fp64):
// a few hundred ulps of the row's magnitude, far above reordering noise and far below any
// real bug (a missed or doubled entry, NaN from the poisoned output).
template <class T>
CheckResult check_result(const std::vector<T>& y, const std::vector<double>& ref, const std::vector<double>& magnitude);

// Partial sums (the gather floor's, one per block) against the sum of the reference y, with
// the same tolerance applied to the sum of the row magnitudes.
template <class T>
CheckResult check_total(const std::vector<T>& partials, const std::vector<double>& ref, const std::vector<double>& magnitude);

}  // namespace apiary::spmv
