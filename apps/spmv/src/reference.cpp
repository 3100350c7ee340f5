#include "reference.hpp"

#include <apiary/platform.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

namespace apiary::spmv {

template <class T>
void reference_spmv(const sparse::Csr<T>& a, const std::vector<T>& x, std::vector<double>& y, std::vector<double>& magnitude) {
  y.assign(static_cast<std::size_t>(a.rows), 0.0);
  magnitude.assign(static_cast<std::size_t>(a.rows), 0.0);
  const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), static_cast<unsigned>(a.rows / 4096 + 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const sparse::index_t b = static_cast<sparse::index_t>(static_cast<std::int64_t>(a.rows) * t / threads);
      const sparse::index_t e = static_cast<sparse::index_t>(static_cast<std::int64_t>(a.rows) * (t + 1) / threads);
      for (sparse::index_t r = b; r < e; ++r) {
        double sum = 0, mag = 0;
        for (sparse::index_t k = a.row_offsets[r]; k < a.row_offsets[r + 1]; ++k) {
          const double p = static_cast<double>(a.values[k]) * static_cast<double>(x[a.col_indices[k]]);
          sum += p;
          mag += std::abs(p);
        }
        y[r] = sum;
        magnitude[r] = mag;
      }
    });
  for (auto& th : pool) th.join();
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = static_cast<T>(static_cast<double>(mix64(seed * 0x100000001b3ull + i) >> 11) * 0x1.0p-52 - 1.0);
  return x;
}

template <class T>
CheckResult check_result(const std::vector<T>& y, const std::vector<double>& ref, const std::vector<double>& magnitude) {
  CheckResult c;
  c.tolerance = sizeof(T) == 4 ? 1e-4 : 1e-11;
  if (y.size() != ref.size()) {
    c.ok = false;
    c.message = "size mismatch";
    return c;
  }
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double err = std::abs(static_cast<double>(y[i]) - ref[i]);
    const double scaled = err / (magnitude[i] + 1e-300);
    const bool bad = !(err <= c.tolerance * magnitude[i] + 1e-30);  // NaN fails too
    if (bad || scaled > c.max_error) {
      if (bad && c.ok) {
        c.ok = false;
        c.bad_row = static_cast<std::int64_t>(i);
        std::ostringstream s;
        s << "row " << i << ": got " << static_cast<double>(y[i]) << ", expected " << ref[i] << " (row magnitude "
          << magnitude[i] << ")";
        c.message = s.str();
      }
      if (std::isfinite(scaled)) c.max_error = std::max(c.max_error, scaled);
      else c.max_error = INFINITY;
    }
  }
  return c;
}

template <class T>
CheckResult check_total(const std::vector<T>& partials, const std::vector<double>& ref, const std::vector<double>& magnitude) {
  double got = 0, want = 0, scale = 0;
  for (const T p : partials) got += static_cast<double>(p);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    want += ref[i];
    scale += magnitude[i];
  }
  CheckResult c;
  c.tolerance = sizeof(T) == 4 ? 1e-4 : 1e-11;
  c.max_error = std::abs(got - want) / (scale + 1e-300);
  c.ok = std::abs(got - want) <= c.tolerance * scale + 1e-30;  // NaN fails too
  if (!c.ok) {
    std::ostringstream s;
    s << "sum " << got << ", expected " << want << " (sum of row magnitudes " << scale << ")";
    c.message = s.str();
  }
  return c;
}

template void reference_spmv<float>(const sparse::Csr<float>&, const std::vector<float>&, std::vector<double>&, std::vector<double>&);
template void reference_spmv<double>(const sparse::Csr<double>&, const std::vector<double>&, std::vector<double>&, std::vector<double>&);
template std::vector<float> random_vector<float>(std::size_t, std::uint64_t);
template std::vector<double> random_vector<double>(std::size_t, std::uint64_t);
template CheckResult check_result<float>(const std::vector<float>&, const std::vector<double>&, const std::vector<double>&);
template CheckResult check_result<double>(const std::vector<double>&, const std::vector<double>&, const std::vector<double>&);
template CheckResult check_total<float>(const std::vector<float>&, const std::vector<double>&, const std::vector<double>&);
template CheckResult check_total<double>(const std::vector<double>&, const std::vector<double>&, const std::vector<double>&);

}  // namespace apiary::spmv
