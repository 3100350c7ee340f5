#include "jacobi.hpp"

#include <apiary/error.hpp>
#include <apiary/sparse/generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace apiary::jacobi {

const char* to_string(Status s) {
  switch (s) {
    case Status::running: return "running";
    case Status::converged: return "converged";
    case Status::max_iter: return "max_iter";
    case Status::diverged_nonfinite: return "diverged_nonfinite";
    case Status::diverged_growth: return "diverged_growth";
  }
  return "?";
}

void validate_params(const Params& p) {
  if (!(p.omega > 0) || !std::isfinite(p.omega)) throw InputError("jacobi", "omega must be positive and finite");
  if (!(p.tol >= 0)) throw InputError("jacobi", "tolerance must be >= 0");
  if (p.max_iter < 0) throw InputError("jacobi", "max iterations must be >= 0");
  if (p.check_every < 1) throw InputError("jacobi", "check_every must be >= 1");
}

template <class T>
std::vector<T> checked_diagonal(const sparse::Csr<T>& a, const std::string& name) {
  if (a.rows != a.cols) {
    throw InputError(name, "Jacobi needs a square matrix, got " + std::to_string(a.rows) + " x " + std::to_string(a.cols));
  }
  std::vector<T> d(static_cast<std::size_t>(a.rows), T(0));
  for (index_t r = 0; r < a.rows; ++r) {
    bool found = false;
    for (index_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
      if (a.col_indices[e] == r) {
        d[r] += a.values[e];  // duplicates add up, as in A x
        found = true;
      }
    }
    if (!found || d[r] == T(0) || !std::isfinite(static_cast<double>(d[r]))) {
      throw InputError(name, std::string("Jacobi needs a non-zero diagonal: row ") + std::to_string(r) +
                                 " (0-based; " + std::to_string(r + 1) + " in Matrix Market numbering) has " +
                                 (found ? "a zero or non-finite diagonal entry" : "no diagonal entry"));
    }
  }
  return d;
}

template <class T>
std::vector<T> ones_rhs(const sparse::Csr<T>& a) {
  std::vector<T> b(static_cast<std::size_t>(a.rows));
  for (index_t r = 0; r < a.rows; ++r) {
    T s = 0;
    for (index_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) s = s + a.values[e];
    b[r] = s;
  }
  return b;
}

template <class T>
double relative_residual(const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& x) {
  double rr = 0, bb = 0;
  for (index_t r = 0; r < a.rows; ++r) {
    double s = 0;
    for (index_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e)
      s += static_cast<double>(a.values[e]) * static_cast<double>(x[a.col_indices[e]]);
    const double ri = static_cast<double>(b[r]) - s;
    rr += ri * ri;
    bb += static_cast<double>(b[r]) * static_cast<double>(b[r]);
  }
  return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

template <class T>
Result<T> cpu_jacobi(const sparse::Csr<T>& a, const std::vector<T>& b, const Params& p, const std::string& name) {
  validate_params(p);
  const std::vector<T> d = checked_diagonal(a, name);
  if (b.size() != static_cast<std::size_t>(a.rows)) throw InputError(name, "right-hand side has the wrong length");
  const std::size_t n = static_cast<std::size_t>(a.rows);
  double bb = 0;
  for (T v : b) bb += static_cast<double>(v) * static_cast<double>(v);
  const double bnorm = bb > 0 ? std::sqrt(bb) : 1.0;  // b = 0: absolute residual
  const T omega = static_cast<T>(p.omega);
  std::vector<T> x(n, T(0)), next(n);
  Result<T> res;
  double min_rel = INFINITY;
  for (int k = 0;; ++k) {
    double rr = 0;
    for (index_t r = 0; r < a.rows; ++r) {
      T s = 0;
      for (index_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
        const T prod = a.values[e] * x[a.col_indices[e]];
        s = s + prod;
      }
      const T ri = b[r] - s;
      rr += static_cast<double>(ri) * static_cast<double>(ri);
      const T step = omega * ri;
      next[r] = x[r] + step / d[r];
    }
    if (is_check_iteration(k, p)) {
      const double rel = std::sqrt(rr) / bnorm;
      const int st = jacobi_decide(rel, k, p, min_rel);
      if (st != 0) {
        res.status = static_cast<Status>(st);
        res.iterations = k;
        res.residual = rel;
        res.min_residual = min_rel;
        res.x = std::move(x);
        return res;
      }
    }
    x.swap(next);
  }
}

std::string divergence_message(const std::string& name, Status s, int iterations, double residual, double min_residual,
                               const Params& p) {
  std::ostringstream os;
  os << name << ": Jacobi ";
  if (s == Status::diverged_nonfinite) {
    os << "diverged: the residual became NaN/Inf at iteration " << iterations;
  } else if (s == Status::diverged_growth) {
    os << "diverged: the relative residual grew to " << residual << " at iteration " << iterations << ", more than "
       << p.divergence_factor << "x its minimum " << min_residual;
  } else if (s == Status::max_iter) {
    os << "did not converge: relative residual " << residual << " > tolerance " << p.tol << " after " << iterations
       << " iterations (max)";
  } else {
    os << "ended with status " << to_string(s);
  }
  if (diverged(s)) {
    os << " (omega = " << p.omega
       << "). Jacobi converges for SPD A iff omega < 2 / lambda_max(D^-1 A): choose a smaller omega, or a diagonally "
          "dominant matrix";
  }
  return os.str();
}

sparse::Csr<double> make_diagonally_dominant(const sparse::Csr<double>& a, double factor) {
  if (a.rows != a.cols) throw InputError("make_diagonally_dominant", "needs a square matrix");
  sparse::Csr<double> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.row_offsets.assign(1, 0);
  out.col_indices.reserve(a.nnz() + static_cast<std::size_t>(a.rows));
  out.values.reserve(a.nnz() + static_cast<std::size_t>(a.rows));
  for (index_t r = 0; r < a.rows; ++r) {
    double off = 0;
    for (index_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e)
      if (a.col_indices[e] != r) off += std::fabs(a.values[e]);
    const double diag = factor * off + 1.0;
    bool placed = false;
    for (index_t e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
      const index_t c = a.col_indices[e];
      if (c == r) continue;
      if (!placed && c > r) {
        out.col_indices.push_back(r);
        out.values.push_back(diag);
        placed = true;
      }
      out.col_indices.push_back(c);
      out.values.push_back(a.values[e]);
    }
    if (!placed) {
      out.col_indices.push_back(r);
      out.values.push_back(diag);
    }
    out.row_offsets.push_back(static_cast<index_t>(out.values.size()));
  }
  return out;
}

sparse::Csr<double> generate(const std::string& spec) {
  if (spec.rfind("dd:", 0) == 0) return make_diagonally_dominant(sparse::generate(spec.substr(3)));
  return sparse::generate(spec);
}

template <class T>
Comparison compare_results(const Result<T>& got, const Result<T>& ref, double x_tol, int iteration_slack) {
  Comparison c;
  std::ostringstream os;
  double num = 0, den = 0;
  bool finite = got.x.size() == ref.x.size();
  for (std::size_t i = 0; finite && i < got.x.size(); ++i) {
    const double g = static_cast<double>(got.x[i]), r = static_cast<double>(ref.x[i]);
    if (!std::isfinite(g)) finite = false;
    num = std::max(num, std::fabs(g - r));
    den = std::max(den, std::fabs(r));
  }
  c.rel_error = finite ? num / (den > 0 ? den : 1.0) : INFINITY;
  const bool same_status = got.status == ref.status;
  const bool iters_ok = std::abs(got.iterations - ref.iterations) <= iteration_slack;
  const bool x_ok = diverged(ref.status) || c.rel_error < x_tol;
  c.ok = same_status && iters_ok && x_ok;
  if (!same_status) os << "status " << to_string(got.status) << " vs reference " << to_string(ref.status) << "; ";
  if (!iters_ok) os << "iterations " << got.iterations << " vs reference " << ref.iterations << " (slack " << iteration_slack << "); ";
  if (!x_ok) os << "relative error of x " << c.rel_error << " >= " << x_tol << "; ";
  c.message = os.str();
  return c;
}

#define APIARY_JACOBI_INSTANTIATE(T)                                                                           \
  template std::vector<T> checked_diagonal(const sparse::Csr<T>&, const std::string&);                         \
  template std::vector<T> ones_rhs(const sparse::Csr<T>&);                                                     \
  template double relative_residual(const sparse::Csr<T>&, const std::vector<T>&, const std::vector<T>&);      \
  template Result<T> cpu_jacobi(const sparse::Csr<T>&, const std::vector<T>&, const Params&, const std::string&); \
  template Comparison compare_results(const Result<T>&, const Result<T>&, double, int);
APIARY_JACOBI_INSTANTIATE(float)
APIARY_JACOBI_INSTANTIATE(double)

}  // namespace apiary::jacobi
