#include "jacobi_gpu.hpp"
#include "rounded_ops.cuh"

#include <apiary/cuda_check.hpp>
#include <apiary/cuda_graph_while.hpp>
#include <apiary/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

namespace apiary::jacobi {

namespace {

constexpr int block_threads = 256;
constexpr int check_threads = 256;

void cusparse_check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw CudaError(std::string("cuSPARSE error ") + cusparseGetErrorString(status) + " in " + call);
}
#define APIARY_JACOBI_CUSPARSE(call) cusparse_check((call), #call)

// One group of G threads per row (G = 1: row-ordered sum, bitwise equal to the CPU reference).
// r_k = b - A x_k (or b - y with y = A x_k from cuSPARSE), x_{k+1} = x_k + omega r_k / d, and the
// per-block partial sum of r_k^2 (double).
template <class T, int G>
__global__ void __launch_bounds__(block_threads)
    update_kernel(sparse::CsrView<T> a, const T* __restrict__ b, const T* __restrict__ d, T* x0, T* x1,
                  const T* __restrict__ y, const DeviceState* state, double* partial, T omega) {
  __shared__ double warp_sums[block_threads / 32];
  if (state->status != 0) return;  // stopped (a later launch of a kernel-by-kernel chunk)
  const int k = state->k;
  const T* xin = (k & 1) ? x1 : x0;
  T* xout = (k & 1) ? x0 : x1;
  const int lane = threadIdx.x % G;
  const long long group = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const long long groups = static_cast<long long>(gridDim.x) * blockDim.x / G;
  double rr = 0;
  // The loop condition is uniform over the warp (its first group's row), so that every lane
  // takes part in the shuffles; rows past the end are inactive.
  const long long group_in_warp = (threadIdx.x % 32) / G;
  for (long long r = group; r - group_in_warp < a.rows; r += groups) {
    const bool active = r < a.rows;
    T s = 0;
    if (y) {
      if (active) s = y[r];
    } else {
      if (active) {
        const index_t begin = a.row_offsets[r], end = a.row_offsets[r + 1];
        for (index_t e = begin + lane; e < end; e += G) s = add_rn(s, mul_rn(__ldg(&a.values[e]), __ldg(&xin[__ldg(&a.col_indices[e])])));
      }
      if constexpr (G > 1) {
#pragma unroll
        for (int off = G / 2; off > 0; off /= 2) s = add_rn(s, __shfl_down_sync(0xffffffffu, s, off, G));
      }
    }
    if (active && lane == 0) {
      // Explicitly rounded (immune to fast-math flags): the reference's x + (omega * r) / d.
      const T ri = sub_rn(b[r], s);
      rr += static_cast<double>(ri) * static_cast<double>(ri);
      xout[r] = damped_update(xin[r], omega, ri, d[r]);
    }
  }
  for (int off = 16; off > 0; off /= 2) rr += __shfl_down_sync(0xffffffffu, rr, off);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = rr;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (int w = 0; w < block_threads / 32; ++w) total += warp_sums[w];
    partial[blockIdx.x] = total;
  }
}

// One block: ||r_k||^2 from the partials (fixed order), the decision on check iterations, and
// k -> k + 1 while running. In the graph version it also drives the WHILE node.
__global__ void __launch_bounds__(check_threads)
    check_kernel(DeviceState* state, const double* partial, int parts, Params p, cudaGraphConditionalHandle handle,
                 bool set_conditional) {
  __shared__ double sums[check_threads];
  if (state->status != 0) {
    if (set_conditional && threadIdx.x == 0) cudaGraphSetConditional(handle, 0);
    return;
  }
  double s = 0;
  for (int i = threadIdx.x; i < parts; i += check_threads) s += partial[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int half = check_threads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const int k = state->k;
  const double rel = sqrt(sums[0]) / state->bnorm;
  state->rel = rel;
  int status = 0;
  if (is_check_iteration(k, p)) {
    double min_rel = state->min_rel;
    status = jacobi_decide(rel, k, p, min_rel);
    state->min_rel = min_rel;
  }
  if (status != 0) {
    state->status = status;
  } else {
    state->k = k + 1;
  }
  if (set_conditional) cudaGraphSetConditional(handle, status == 0 ? 1u : 0u);
}

TaskVersion task_version_of(Version v) {
  switch (v) {
    case Version::stages_phases: return TaskVersion::stages_phases;
    case Version::stages_deps: return TaskVersion::stages_deps;
    case Version::checkpoints: return TaskVersion::checkpoints;
    case Version::autonomous: return TaskVersion::autonomous;
    case Version::stages_inline: return TaskVersion::stages_inline;
    default: throw Error(std::string(to_string(v)) + " is not a task version (internal error)");
  }
}

int pick_group(double avg_row) {
  if (avg_row < 12) return 1;
  if (avg_row < 32) return 4;
  if (avg_row < 64) return 8;
  return 32;
}

}  // namespace

const char* to_string(Version v) {
  switch (v) {
    case Version::kbk: return "kbk";
    case Version::graph: return "graph";
    case Version::cusparse: return "cusparse";
    case Version::stages_phases: return "stages_phases";
    case Version::stages_deps: return "stages_deps";
    case Version::checkpoints: return "checkpoints";
    case Version::autonomous: return "autonomous";
    case Version::stages_inline: return "stages_inline";
  }
  return "?";
}

Version parse_version(std::string_view s) {
  for (Version v : all_versions)
    if (s == to_string(v)) return v;
  std::string names;  // from all_versions, so that a new version cannot be left out
  for (Version v : all_versions) names += std::string(to_string(v)) + ", ";
  throw InputError("--version", "unknown version '" + std::string(s) + "' (" + names.substr(0, names.size() - 2) +
                                    "; or all, baselines, tasks)");
}

std::vector<Version> parse_versions(std::string_view list) {
  std::vector<Version> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (name == "all" || name == "baselines" || name == "tasks") {
      for (Version v : all_versions)
        if (name == "all" || (name == "tasks") == is_task_version(v)) out.push_back(v);
    } else {
      out.push_back(parse_version(name));
    }
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  if (out.empty()) throw InputError("--version", "no version given");
  return out;
}

template <class T>
GpuJacobi<T>::GpuJacobi(const sparse::Csr<T>& a, const std::vector<T>& b, const Params& p, const std::string& name,
                        const TaskOptions& tasks)
    : name_(name), p_(p), rows_(a.rows), nnz_(a.nnz()), a_((validate_params(p), checked_diagonal(a, name), a)),
      b_(b), d_(checked_diagonal(a, name)), y_(static_cast<std::size_t>(a.rows)),
      x_{sparse::DeviceBuffer<T>(static_cast<std::size_t>(a.rows)), sparse::DeviceBuffer<T>(static_cast<std::size_t>(a.rows))},
      state_(1) {
  if (b.size() != static_cast<std::size_t>(a.rows)) throw InputError(name, "right-hand side has the wrong length");
  double bb = 0;
  for (T v : b) bb += static_cast<double>(v) * static_cast<double>(v);
  bnorm_ = bb > 0 ? std::sqrt(bb) : 1.0;
  group_ = pick_group(a.rows ? static_cast<double>(nnz_) / a.rows : 1.0);
  for (index_t r = 0; r < a.rows; ++r)
    max_row_nnz_ = std::max<int>(max_row_nnz_, static_cast<int>(a.row_offsets[r + 1] - a.row_offsets[r]));
  int device = 0;
  APIARY_CUDA_CHECK(cudaGetDevice(&device));
  APIARY_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  const long long needed = (static_cast<long long>(rows_) * group_ + block_threads - 1) / block_threads;
  blocks_ = static_cast<int>(std::max(1LL, std::min<long long>(needed, 32LL * sms_)));
  partial_ = sparse::DeviceBuffer<double>(static_cast<std::size_t>(blocks_));
  task_options_ = tasks;
}

template <class T>
GpuJacobi<T>::~GpuJacobi() {
  if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
  if (graph_) cudaGraphDestroy(graph_);
  if (sp_buffer_) cudaFree(sp_buffer_);
  if (sp_x_) cusparseDestroyDnVec(sp_x_);
  if (sp_y_) cusparseDestroyDnVec(sp_y_);
  if (sp_a_) cusparseDestroySpMat(sp_a_);
  if (sp_) cusparseDestroy(sp_);
}

template <class T>
std::size_t GpuJacobi<T>::bytes_per_iteration() const {
  return sizeof(index_t) * (static_cast<std::size_t>(rows_) + 1) + nnz_ * (sizeof(index_t) + sizeof(T)) +
         4 * static_cast<std::size_t>(rows_) * sizeof(T);
}

template <class T>
TaskJacobi<T>& GpuJacobi<T>::tasks() {
  if (!tasks_) {
    const TaskInputs<T> in{a_.view(), b_.data(), d_.data(), state_.data(), bnorm_, group_, max_row_nnz_, sms_};
    tasks_ = std::make_unique<TaskJacobi<T>>(in, p_, task_options_);
  }
  return *tasks_;
}

template <class T>
const Partition& GpuJacobi<T>::partition(Version v, Scheduler s) {
  return tasks().partition(task_version_of(v), s);
}

template <class T>
const Partition& GpuJacobi<T>::partition() {
  return partition(is_task_version(last_) ? last_ : Version::stages_inline, scheduler_);
}

template <class T>
RowMapping GpuJacobi<T>::row_mapping(Version v, Scheduler s) {
  return tasks().row_mapping(task_version_of(v), s);
}

template <class T>
bool GpuJacobi<T>::held_successors() {
  return is_task_version(last_) && tasks().holds_successors(task_version_of(last_), scheduler_);
}

template <class T>
bool GpuJacobi<T>::resident_rows() {
  return is_task_version(last_) && tasks().resident_rows(task_version_of(last_), scheduler_);
}

template <class T>
unsigned GpuJacobi<T>::resident_takes() {
  return is_task_version(last_) ? tasks().resident_takes() : 0;
}

template <class T>
RowMapping GpuJacobi<T>::row_mapping() {
  return row_mapping(is_task_version(last_) ? last_ : Version::stages_inline, scheduler_);
}

template <class T>
bool GpuJacobi<T>::task_arithmetic_exact() {
  // Split rows add pieces in arrival order; long rows are summed by a warp (staged) or a whole
  // task (grouped) in another order than the reference's.
  if (partition().split_rows != 0) return false;
  const int own_order = row_mapping() == RowMapping::staged ? staged_long_row_nnz : long_row_nnz(group_);
  return max_row_nnz_ <= own_order;
}


template <class T>
void GpuJacobi<T>::poison() {
  if (tasks_) tasks_->poison();
  x_[0].fill_bytes(0xff);
  x_[1].fill_bytes(0xff);
  state_.fill_bytes(0xff);
  APIARY_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class T>
void GpuJacobi<T>::reset() {
  DeviceState s;
  s.min_rel = INFINITY;
  s.bnorm = bnorm_;
  APIARY_CUDA_CHECK(cudaMemsetAsync(x_[0].data(), 0, x_[0].bytes(), nullptr));
  APIARY_CUDA_CHECK(cudaMemcpyAsync(state_.data(), &s, sizeof s, cudaMemcpyHostToDevice, nullptr));
}

template <class T>
void GpuJacobi<T>::launch_iteration(bool use_y, bool set_conditional) {
  const T omega = static_cast<T>(p_.omega);
  const T* y = use_y ? y_.data() : nullptr;
  const int g = use_y ? 1 : group_;
  auto launch = [&](auto kernel) {
    kernel<<<blocks_, block_threads, 0, nullptr>>>(a_.view(), b_.data(), d_.data(), x_[0].data(), x_[1].data(), y,
                                                  state_.data(), partial_.data(), omega);
  };
  switch (g) {
    case 1: launch(update_kernel<T, 1>); break;
    case 4: launch(update_kernel<T, 4>); break;
    case 8: launch(update_kernel<T, 8>); break;
    default: launch(update_kernel<T, 32>); break;
  }
  check_kernel<<<1, check_threads, 0, nullptr>>>(state_.data(), partial_.data(), blocks_, p_, cond_handle_,
                                                  set_conditional);
}

template <class T>
DeviceState GpuJacobi<T>::read_state() const {
  DeviceState s;
  APIARY_CUDA_CHECK(cudaMemcpy(&s, state_.data(), sizeof s, cudaMemcpyDeviceToHost));
  return s;
}

template <class T>
void GpuJacobi<T>::run_kbk() {
  // Chunks of check_every launches end on the check iterations (k = 0, c, 2c, ...); the
  // device stops at max_iter, so at most max_iter / c + 2 reads; the bound below is a guard.
  const long long limit = static_cast<long long>(p_.max_iter) + 2LL * p_.check_every + 2;
  long long launched = 0;
  int chunk = 1;  // k = 0 is a check iteration
  for (;;) {
    for (int i = 0; i < chunk; ++i) launch_iteration(false, false);
    APIARY_CUDA_CHECK(cudaGetLastError());
    launched += chunk;
    if (read_state().status != 0) return;
    if (launched > limit) throw Error(name_ + ": kernel-by-kernel Jacobi did not stop (internal error)");
    chunk = p_.check_every;
  }
}

template <class T>
void GpuJacobi<T>::build_graph() {
  APIARY_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
  const GraphWhileLoop loop = add_graph_while_loop(graph_);
  cond_handle_ = loop.handle;
  // The body: the two iteration kernels, captured from a side stream (the legacy stream cannot capture).
  cudaStream_t capture = nullptr;
  APIARY_CUDA_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  const T omega = static_cast<T>(p_.omega);
  APIARY_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture, loop.body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
  auto launch = [&](auto kernel) {
    kernel<<<blocks_, block_threads, 0, capture>>>(a_.view(), b_.data(), d_.data(), x_[0].data(), x_[1].data(),
                                                   nullptr, state_.data(), partial_.data(), omega);
  };
  switch (group_) {
    case 1: launch(update_kernel<T, 1>); break;
    case 4: launch(update_kernel<T, 4>); break;
    case 8: launch(update_kernel<T, 8>); break;
    default: launch(update_kernel<T, 32>); break;
  }
  check_kernel<<<1, check_threads, 0, capture>>>(state_.data(), partial_.data(), blocks_, p_, loop.handle, true);
  cudaGraph_t captured = nullptr;
  APIARY_CUDA_CHECK(cudaStreamEndCapture(capture, &captured));
  APIARY_CUDA_CHECK(cudaStreamDestroy(capture));
  APIARY_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
}

template <class T>
void GpuJacobi<T>::run_graph() {
  if (!graph_exec_) build_graph();
  APIARY_CUDA_CHECK(cudaGraphLaunch(graph_exec_, nullptr));
  APIARY_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  if (read_state().status == 0) throw Error(name_ + ": graph Jacobi ended without a decision (internal error)");
}

template <class T>
void GpuJacobi<T>::run_cusparse() {
  constexpr cudaDataType type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
  const T alpha = 1, beta = 0;
  if (!sp_) {
    const auto v = a_.view();
    APIARY_JACOBI_CUSPARSE(cusparseCreate(&sp_));
    APIARY_JACOBI_CUSPARSE(cusparseSetStream(sp_, nullptr));
    APIARY_JACOBI_CUSPARSE(cusparseCreateCsr(&sp_a_, v.rows, v.cols, v.nnz, const_cast<index_t*>(v.row_offsets),
                                             const_cast<index_t*>(v.col_indices), const_cast<T*>(v.values),
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type));
    APIARY_JACOBI_CUSPARSE(cusparseCreateDnVec(&sp_x_, rows_, x_[0].data(), type));
    APIARY_JACOBI_CUSPARSE(cusparseCreateDnVec(&sp_y_, rows_, y_.data(), type));
    std::size_t bytes = 0;
    APIARY_JACOBI_CUSPARSE(cusparseSpMV_bufferSize(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, sp_a_, sp_x_, &beta,
                                                   sp_y_, type, CUSPARSE_SPMV_CSR_ALG1, &bytes));
    APIARY_CUDA_CHECK(cudaMalloc(&sp_buffer_, bytes ? bytes : 1));
    APIARY_JACOBI_CUSPARSE(cusparseSpMV_preprocess(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, sp_a_, sp_x_, &beta,
                                                   sp_y_, type, CUSPARSE_SPMV_CSR_ALG1, sp_buffer_));
  }
  // The host knows k: the device state advances exactly once per iteration while running.
  for (long long k = 0;; ++k) {
    APIARY_JACOBI_CUSPARSE(cusparseDnVecSetValues(sp_x_, x_[k & 1].data()));
    APIARY_JACOBI_CUSPARSE(cusparseSpMV(sp_, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, sp_a_, sp_x_, &beta, sp_y_, type,
                                        CUSPARSE_SPMV_CSR_ALG1, sp_buffer_));
    launch_iteration(true, false);
    APIARY_CUDA_CHECK(cudaGetLastError());
    if (k % p_.check_every == 0 || k >= p_.max_iter) {
      if (read_state().status != 0) return;
    }
    if (k > static_cast<long long>(p_.max_iter) + 1) throw Error(name_ + ": cuSPARSE Jacobi did not stop (internal error)");
  }
}

template <class T>
void GpuJacobi<T>::run(Version v) {
  last_ = v;
  switch (v) {
    case Version::kbk: reset(); run_kbk(); break;
    case Version::graph: reset(); run_graph(); break;
    case Version::cusparse: reset(); run_cusparse(); break;
    default: report_ = tasks().run(task_version_of(v), scheduler_); break;
  }
}

template <class T>
Result<T> GpuJacobi<T>::result() const {
  const DeviceState s = read_state();
  Result<T> r;
  r.iterations = s.k;
  r.status = static_cast<Status>(s.status);
  r.residual = s.rel;
  r.min_residual = s.min_rel;
  if (is_task_version(last_)) {
    r.x.resize(static_cast<std::size_t>(rows_));
    APIARY_CUDA_CHECK(cudaMemcpy(r.x.data(), tasks_->iterate(s.k), r.x.size() * sizeof(T), cudaMemcpyDeviceToHost));
  } else {
    r.x = x_[s.k & 1].download();
  }
  return r;
}

template class GpuJacobi<float>;
template class GpuJacobi<double>;

}  // namespace apiary::jacobi
