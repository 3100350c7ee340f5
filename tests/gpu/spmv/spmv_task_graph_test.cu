// SpMV inside an apiary task graph: each task is one "team" of a load-balancing schedule
// (balance::worker_processors(worker, task, tasks)), so N tasks of 128 threads together cover
// the matrix exactly as N blocks of a plain kernel would. Checked against a CPU reference on
// a fresh random matrix with power-law row lengths (long rows split across tasks).
#include "gpu_test.hpp"

#include <apiary/apiary.cuh>
#include <apiary/balance/layout.hpp>
#include <apiary/balance/merge_path.hpp>
#include <apiary/balance/processors.hpp>
#include <apiary/balance/thread_mapped.hpp>
#include <apiary/device_buffer.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace spmv_task_test {

struct SpmvJob {
  const int* row_ptr;
  const int* cols;
  const double* vals;
  const double* x;
  double* y;
  int rows;
  unsigned task;
  unsigned tasks;
  unsigned schedule;  // 0 thread-mapped, 1 merge-path
};

struct Sink {
  const SpmvJob& job;
  __device__ void operator()(const apiary::balance::Run<int>& r) const {
    double sum = 0;
    for (int k = r.first; k < r.last; k += r.stride) sum += job.vals[k] * job.x[job.cols[k]];
    if (r.combine == apiary::balance::Combine::store) job.y[r.tile] = sum;
    else atomicAdd(&job.y[r.tile], sum);
  }
};

struct SpmvTask {
  using Item = SpmvJob;
  static constexpr unsigned threads = 128;
  static constexpr unsigned shared_bytes = 64;  // merge-path's team bounds
  static constexpr const char* name = "SpmvTask";
  template <class Ctx>
  __device__ void operator()(apiary::Worker w, const Item& job, Ctx&) const {
    auto procs = apiary::balance::worker_processors(w, job.task, job.tasks);
    const apiary::balance::OffsetsLayout<int> layout{job.row_ptr, job.rows};
    const apiary::balance::ScheduleParams<int> params{};
    const Sink sink{job};
    if (job.schedule == 0) {
      apiary::balance::ThreadMapped<decltype(procs), decltype(layout)> s(procs, layout, params, nullptr);
      s.run(sink);
    } else {
      apiary::balance::MergePath<decltype(procs), decltype(layout)> s(procs, layout, params, w.shared<std::byte>());
      s.run(sink);
    }
  }
};
using Graph = apiary::PhaseQueue<apiary::Phaseless<SpmvTask>>;

}  // namespace spmv_task_test

int main() {
  using namespace spmv_task_test;
  apiary::testing::require_gpu_or_skip("apiary_spmv_task_graph_test");
  std::mt19937_64 rng(std::random_device{}());
  const int rows = 200000;
  std::vector<int> row_ptr(rows + 1, 0), cols;
  std::vector<double> vals;
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  for (int r = 0; r < rows; ++r) {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const int len = r % 50000 == 0 ? 20000 : static_cast<int>(std::pow(u, -0.6));  // power law + a few huge rows
    for (int k = 0; k < len; ++k) {
      cols.push_back(static_cast<int>(rng() % rows));
      vals.push_back(value(rng));
    }
    row_ptr[r + 1] = static_cast<int>(cols.size());
  }
  std::vector<double> x(rows), want(rows, 0.0);
  for (auto& v : x) v = value(rng);
  for (int r = 0; r < rows; ++r)
    for (int k = row_ptr[r]; k < row_ptr[r + 1]; ++k) want[r] += vals[k] * x[cols[k]];

  apiary::DeviceBuffer<int> d_row_ptr(row_ptr.size()), d_cols(cols.size());
  apiary::DeviceBuffer<double> d_vals(vals.size()), d_x(x.size()), d_y(rows);
  cudaMemcpy(d_row_ptr.get(), row_ptr.data(), d_row_ptr.bytes(), cudaMemcpyHostToDevice);
  cudaMemcpy(d_cols.get(), cols.data(), d_cols.bytes(), cudaMemcpyHostToDevice);
  cudaMemcpy(d_vals.get(), vals.data(), d_vals.bytes(), cudaMemcpyHostToDevice);
  cudaMemcpy(d_x.get(), x.data(), d_x.bytes(), cudaMemcpyHostToDevice);

  bool ok = true;
  for (unsigned schedule = 0; schedule < 2; ++schedule) {
    // thread-mapped stores every row; merge-path splits rows and accumulates into zeros.
    std::vector<double> init(rows, schedule == 0 ? std::nan("") : 0.0);
    cudaMemcpy(d_y.get(), init.data(), d_y.bytes(), cudaMemcpyHostToDevice);
    const unsigned tasks = 1000;
    apiary::Runtime<Graph> rt{apiary::Config{}};
    std::vector<SpmvJob> jobs(tasks);
    for (unsigned t = 0; t < tasks; ++t)
      jobs[t] = SpmvJob{d_row_ptr.get(), d_cols.get(), d_vals.get(), d_x.get(), d_y.get(), rows, t, tasks, schedule};
    rt.seed<SpmvTask>(jobs);
    const apiary::Report report = rt.run();
    std::vector<double> got(rows);
    cudaMemcpy(got.data(), d_y.get(), d_y.bytes(), cudaMemcpyDeviceToHost);
    double worst = 0;
    for (int r = 0; r < rows; ++r) {
      const double err = std::abs(got[r] - want[r]) / (1.0 + std::abs(want[r]));
      worst = std::isnan(got[r]) ? INFINITY : std::max(worst, err);
    }
    std::printf("%s: %llu tasks, %zu nonzeros, worst relative error %.3g\n",
                schedule == 0 ? "thread-mapped" : "merge-path", (unsigned long long)report.total_executed, vals.size(), worst);
    ok = ok && worst < 1e-10 && report.total_executed == tasks;
  }
  std::printf("%s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}
