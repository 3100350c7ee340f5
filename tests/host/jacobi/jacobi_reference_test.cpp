// CPU reference of the Jacobi solver: the FACTS iteration counts on the real matrices, the
// error cases (zero diagonal, non-square, divergence) and the parameter semantics the GPU
// versions are checked against.
#include "jacobi.hpp"
#include "jacobi_gpu.hpp"
#include "partition.hpp"

#include <apiary/error.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/matrix_market.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace apiary;
using namespace apiary::jacobi;
using Catch::Matchers::Contains;

namespace {

std::string matrix_dir() {
  if (const char* env = std::getenv("APIARY_MATRIX_DIR"); env && *env) return env;
  return APIARY_MATRIX_DIR;
}

sparse::Csr<double> real(const std::string& name) {
  const std::string path = matrix_dir() + "/" + name + ".mtx";
  if (!std::filesystem::exists(path)) FAIL("missing " << path << " (set APIARY_MATRIX_DIR)");
  return sparse::read_csr<double>(path);
}

double max_rel_error(const std::vector<double>& x, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num = std::max(num, std::fabs(x[i] - ref[i]));
    den = std::max(den, std::fabs(ref[i]));
  }
  return num / (den > 0 ? den : 1);
}

}  // namespace

TEST_CASE("FACTS iteration counts to relative residual 1e-6 (b = A*1, x0 = 0)", "[jacobi]") {
  const std::pair<const char*, int> cases[] = {{"lap2D_5pt_n100", 18534}, {"lap3D_7pt_n20", 1013}, {"gr_30_30", 1393}};
  for (const auto& [name, expected] : cases) {
    INFO(name);
    const auto a = real(name);
    Params p;
    p.tol = 1e-6;
    p.max_iter = 100000;
    const auto r = cpu_jacobi(a, ones_rhs(a), p, name);
    CHECK(r.status == Status::converged);
    CHECK(r.iterations == expected);
    CHECK(r.residual < 1e-6);
    CHECK(relative_residual(a, ones_rhs(a), r.x) < 1e-6);
    CHECK(max_rel_error(r.x, std::vector<double>(r.x.size(), 1.0)) < 1e-3);
  }
}

TEST_CASE("check_every rounds the iteration count up to the next check", "[jacobi]") {
  const auto a = real("lap3D_7pt_n20");
  Params p;
  p.check_every = 10;
  const auto r = cpu_jacobi(a, ones_rhs(a), p);
  CHECK(r.status == Status::converged);
  CHECK(r.iterations == 1020);
}

TEST_CASE("fp32 reference converges on the small real matrices", "[jacobi]") {
  for (const char* name : {"lap3D_7pt_n20", "gr_30_30"}) {
    INFO(name);
    const auto a = sparse::read_csr<float>(matrix_dir() + "/" + name + ".mtx");
    Params p;
    const auto r = cpu_jacobi(a, ones_rhs(a), p, name);
    CHECK(r.status == Status::converged);
    const auto a64 = real(name);
    const auto r64 = cpu_jacobi(a64, ones_rhs(a64), p, name);
    CHECK(std::abs(r.iterations - r64.iterations) <= r64.iterations / 20 + 2);
  }
}

TEST_CASE("max iterations reached is reported, not an error", "[jacobi]") {
  const auto a = real("lap2D_5pt_n100");
  Params p;
  p.max_iter = 100;
  const auto r = cpu_jacobi(a, ones_rhs(a), p);
  CHECK(r.status == Status::max_iter);
  CHECK(r.iterations == 100);
  CHECK(r.residual > 1e-6);
  CHECK_THAT(divergence_message("lap", r.status, r.iterations, r.residual, r.min_residual, p),
             Contains("did not converge"));
}

TEST_CASE("zero diagonal names the row", "[jacobi]") {
  auto a = sparse::laplacian_2d(4, 4);
  for (auto e = a.row_offsets[5]; e < a.row_offsets[6]; ++e)
    if (a.col_indices[e] == 5) a.values[e] = 0;
  CHECK_THROWS_WITH(cpu_jacobi(a, ones_rhs(a), Params{}, "zd"), Contains("row 5"));
  // Missing diagonal entry.
  sparse::Csr<double> m;
  m.rows = m.cols = 2;
  m.row_offsets = {0, 1, 2};
  m.col_indices = {0, 0};
  m.values = {1.0, 1.0};
  CHECK_THROWS_WITH(checked_diagonal(m, "missing"), Contains("row 1") && Contains("no diagonal"));
}

TEST_CASE("non-square matrices are rejected", "[jacobi]") {
  sparse::Csr<double> m;
  m.rows = 2;
  m.cols = 3;
  m.row_offsets = {0, 1, 2};
  m.col_indices = {0, 1};
  m.values = {1.0, 1.0};
  CHECK_THROWS_WITH(cpu_jacobi(m, std::vector<double>{1.0, 1.0}, Params{}, "ns"), Contains("square"));
}

TEST_CASE("diverging iterations stop with a message suggesting omega", "[jacobi]") {
  SECTION("bcsstk01") {
    const auto a = real("bcsstk01");
    const auto r = cpu_jacobi(a, ones_rhs(a), Params{});
    CHECK(diverged(r.status));
    CHECK(r.iterations < 20000);
    CHECK_THAT(divergence_message("bcsstk01", r.status, r.iterations, r.residual, r.min_residual, Params{}),
               Contains("diverged") && Contains("omega < 2 / lambda_max(D^-1 A)"));
  }
  SECTION("Laplacian with a unit diagonal (lambda_max(D^-1 A) ~ 9)") {
    auto a = sparse::laplacian_2d(30, 30);
    for (index_t r = 0; r < a.rows; ++r)
      for (auto e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e)
        if (a.col_indices[e] == r) a.values[e] = 1.0;
    const auto r = cpu_jacobi(a, ones_rhs(a), Params{});
    CHECK(diverged(r.status));
  }
  SECTION("omega too large on a convergent matrix") {
    const auto a = real("lap3D_7pt_n20");
    Params p;
    p.omega = 2.5;
    CHECK(diverged(cpu_jacobi(a, ones_rhs(a), p).status));
  }
}

TEST_CASE("damping: omega < 1 still converges, more slowly", "[jacobi]") {
  const auto a = real("lap3D_7pt_n20");
  Params p;
  p.omega = 0.8;
  const auto r = cpu_jacobi(a, ones_rhs(a), p);
  CHECK(r.status == Status::converged);
  CHECK(r.iterations > 1013);
}

TEST_CASE("generated suite inputs: diagonally dominant ones converge fast", "[jacobi]") {
  for (const char* spec : {"A3", "dd:powerlaw:n=5000,avg=5,alpha=1.8,max=500", "diagdom:n=2000,avg=7"}) {
    INFO(spec);
    const auto a = generate(spec);
    const auto r = cpu_jacobi(a, ones_rhs(a), Params{});
    CHECK(r.status == Status::converged);
    CHECK(r.iterations < 200);
  }
}

TEST_CASE("bad parameters are rejected", "[jacobi]") {
  const auto a = sparse::laplacian_2d(3, 3);
  Params p;
  p.omega = 0;
  CHECK_THROWS_AS(cpu_jacobi(a, ones_rhs(a), p), InputError);
  p = Params{};
  p.check_every = 0;
  CHECK_THROWS_AS(cpu_jacobi(a, ones_rhs(a), p), InputError);
}

TEST_CASE("compare_results: status, iterations, x and NaN", "[jacobi]") {
  Result<double> ref;
  ref.x = {1.0, 2.0};
  ref.iterations = 10;
  ref.status = Status::converged;
  Result<double> got = ref;
  CHECK(compare_results(got, ref, 1e-5, 0).ok);
  got.iterations = 11;
  CHECK_FALSE(compare_results(got, ref, 1e-5, 0).ok);
  CHECK(compare_results(got, ref, 1e-5, 1).ok);
  got = ref;
  got.x[1] = 2.001;
  CHECK_FALSE(compare_results(got, ref, 1e-5, 0).ok);
  got.x[1] = std::nan("");
  CHECK_FALSE(compare_results(got, ref, 1e-5, 0).ok);
  got = ref;
  got.status = Status::max_iter;
  CHECK_THAT(compare_results(got, ref, 1e-5, 0).message, Contains("status"));
}

TEST_CASE("make_diagonally_dominant: strictly dominant rows, sorted, diagonal present", "[jacobi]") {
  const auto a = make_diagonally_dominant(sparse::generate("powerlaw:n=3000,avg=4,alpha=1.5,max=300,seed=1"));
  REQUIRE(a.rows == 3000);
  for (index_t r = 0; r < a.rows; ++r) {
    double diag = 0, off = 0;
    for (auto e = a.row_offsets[r]; e < a.row_offsets[r + 1]; ++e) {
      if (e > a.row_offsets[r]) REQUIRE(a.col_indices[e - 1] < a.col_indices[e]);
      if (a.col_indices[e] == r) diag += a.values[e];
      else off += std::fabs(a.values[e]);
    }
    REQUIRE(diag > off);
  }
}

TEST_CASE("version lists: names, groups and errors", "[jacobi]") {
  using apiary::jacobi::Version;
  const auto tasks = apiary::jacobi::parse_versions("tasks");
  REQUIRE(tasks.size() == 5);
  for (Version v : tasks) CHECK(apiary::jacobi::is_task_version(v));
  CHECK(apiary::jacobi::parse_versions("baselines").size() == 3);
  CHECK(apiary::jacobi::parse_versions("all").size() == apiary::jacobi::all_versions.size());
  const auto two = apiary::jacobi::parse_versions("graph,autonomous");
  REQUIRE(two.size() == 2);
  CHECK(two[0] == Version::graph);
  CHECK(two[1] == Version::autonomous);
  for (Version v : apiary::jacobi::all_versions) CHECK(apiary::jacobi::parse_version(apiary::jacobi::to_string(v)) == v);
  CHECK_THROWS_WITH(apiary::jacobi::parse_versions("graph,fast"), Catch::Contains("unknown version 'fast'"));
  CHECK_THROWS_WITH(apiary::jacobi::parse_versions("fast"), Catch::Contains("(kbk, graph,") && Catch::Contains("stages_inline; or all"));
  CHECK_THROWS_WITH(apiary::jacobi::parse_partition("rows"), Catch::Contains("row_blocks, balanced"));
  CHECK(apiary::jacobi::parse_partition("balanced") == apiary::jacobi::PartitionKind::balanced);
}
