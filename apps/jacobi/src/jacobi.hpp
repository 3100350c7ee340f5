// Jacobi solver for A x = b (issue 5): parameters, results, the CPU reference and the GPU
// baselines every later task-graph version is checked and measured against.
//
// Numerics (all versions): damped Jacobi  x_{k+1} = x_k + omega * D^{-1} (b - A x_k), x_0 = 0,
// b = A * 1 unless given. At iteration k every version computes r_k = b - A x_k (one SpMV) and,
// in the same pass, x_{k+1}; on "check" iterations (k % check_every == 0, and k == max_iter)
// the relative residual ||r_k||_2 / ||b||_2 decides (jacobi_decide): converged (< tol; the
// answer is x_k and `iterations` = k), diverged (NaN/Inf, or 1e3x above the smallest checked
// residual), or max_iter reached (answer x_{max_iter}). So synchronous versions with the same
// parameters take exactly the same number of iterations as the CPU reference.
#pragma once

#include <apiary/sparse/formats.hpp>

#include <string>
#include <vector>

#if defined(__CUDACC__)
#define APIARY_JACOBI_HD __host__ __device__
#else
#define APIARY_JACOBI_HD
#endif

namespace apiary::jacobi {

using sparse::index_t;

struct Params {
  double omega = 1.0;
  int max_iter = 20000;
  double tol = 1e-6;     // on ||b - A x||_2 / ||b||_2
  int check_every = 1;   // residual checks every this many iterations (always at max_iter)
  double divergence_factor = 1e3;
};

enum class Status : int { running = 0, converged = 1, max_iter = 2, diverged_nonfinite = 3, diverged_growth = 4 };
const char* to_string(Status s);
inline bool diverged(Status s) { return s == Status::diverged_nonfinite || s == Status::diverged_growth; }

// The decision taken on check iterations, shared by the host and the device (graph version).
// rel: relative residual of x_k; min_rel: smallest checked residual so far (updated).
APIARY_JACOBI_HD inline int jacobi_decide(double rel, int k, const Params& p, double& min_rel) {
  if (!(rel == rel) || rel > 1e300) return static_cast<int>(Status::diverged_nonfinite);  // NaN or Inf
  if (rel < p.tol) return static_cast<int>(Status::converged);
  if (rel < min_rel) min_rel = rel;
  if (rel > p.divergence_factor * min_rel) return static_cast<int>(Status::diverged_growth);
  if (k >= p.max_iter) return static_cast<int>(Status::max_iter);
  return static_cast<int>(Status::running);
}
APIARY_JACOBI_HD inline bool is_check_iteration(int k, const Params& p) {
  return k % p.check_every == 0 || k >= p.max_iter;
}

template <class T>
struct Result {
  std::vector<T> x;
  int iterations = 0;     // k of the returned x_k
  double residual = 0;    // relative residual of x_k (as computed by the version)
  Status status = Status::running;
  double min_residual = 0;
};

// Validates A (square, every diagonal entry present and non-zero; InputError naming the row)
// and returns its diagonal.
template <class T> std::vector<T> checked_diagonal(const sparse::Csr<T>& a, const std::string& name = "matrix");
template <class T> std::vector<T> ones_rhs(const sparse::Csr<T>& a);  // b = A * 1
void validate_params(const Params& p);  // InputError for omega <= 0, tol < 0, max_iter < 0, check_every < 1

// CPU reference (row-ordered sums, no FMA contraction; residual norm accumulated in double).
template <class T> Result<T> cpu_jacobi(const sparse::Csr<T>& a, const std::vector<T>& b, const Params& p,
                                        const std::string& name = "matrix");

// ||b - A x||_2 / ||b||_2 in double (independent check of a returned x).
template <class T> double relative_residual(const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& x);

// The message for a diverged / non-converged solve (mentions omega < 2 / lambda_max(D^-1 A)).
std::string divergence_message(const std::string& name, Status s, int iterations, double residual, double min_residual,
                               const Params& p);

// Makes A strictly diagonally dominant (diagonal = factor * sum|off-diagonal| + 1, added where
// missing); turns e.g. a power-law pattern into a safe Jacobi input.
sparse::Csr<double> make_diagonally_dominant(const sparse::Csr<double>& a, double factor = 1.1);

// Matrix from a spec: the apiary::sparse generator specs, plus "dd:<spec>" = make_diagonally_dominant.
sparse::Csr<double> generate(const std::string& spec);

}  // namespace apiary::jacobi

namespace apiary::jacobi {

// A GPU result against the CPU reference: same status, iterations within `iteration_slack`,
// and max|x - x_ref| / max|x_ref| below `x_tol` (x is not compared after a divergence).
struct Comparison {
  bool ok = false;
  double rel_error = 0;
  std::string message;
};
template <class T>
Comparison compare_results(const Result<T>& got, const Result<T>& ref, double x_tol, int iteration_slack);

}  // namespace apiary::jacobi
