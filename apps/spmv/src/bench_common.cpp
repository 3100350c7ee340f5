#include "bench_common.hpp"

#include <apiary/commit_stamp.hpp>
#include <apiary/cuda_check.hpp>
#include <apiary/error.hpp>
#include <apiary/sparse/generators.hpp>
#include <apiary/sparse/matrix_market.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>


namespace apiary::spmv {

DeviceInfo device_info() {
  int device = 0;
  APIARY_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  APIARY_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  int clock_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  info.peak_gbps = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  return info;
}

Timing time_gpu(const std::function<void()>& f, int repeats, int warmup) {
  for (int i = 0; i < warmup; ++i) f();
  cudaEvent_t start, stop;
  APIARY_CUDA_CHECK(cudaEventCreate(&start));
  APIARY_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    APIARY_CUDA_CHECK(cudaEventRecord(start));
    f();
    APIARY_CUDA_CHECK(cudaEventRecord(stop));
    APIARY_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    APIARY_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  Timing timing;
  timing.repeats = repeats;
  if (!ms.empty()) {
    timing.median_ms = ms[ms.size() / 2];
    timing.min_ms = ms.front();
  }
  return timing;
}

double measure_copy_gbps(std::size_t bytes, int repeats) {
  void *a = nullptr, *b = nullptr;
  APIARY_CUDA_CHECK(cudaMalloc(&a, bytes));
  APIARY_CUDA_CHECK(cudaMalloc(&b, bytes));
  APIARY_CUDA_CHECK(cudaMemset(a, 1, bytes));
  const Timing t = time_gpu([&] { APIARY_CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, repeats);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e-3) / 1e9;
}

sparse::Csr<double> load(const MatrixSource& source) {
  if (!source.spec.empty()) return sparse::generate(source.spec);
  return sparse::read_csr<double>(source.file);
}

std::vector<MatrixSource> read_suite(const std::string& path, const std::string& matrix_dir) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open suite file");
  nlohmann::json suite;
  try {
    in >> suite;
  } catch (const std::exception& e) {
    throw InputError(path, std::string("bad JSON: ") + e.what());
  }
  std::vector<MatrixSource> out;
  if (!suite.contains("matrices") || !suite["matrices"].is_array()) throw InputError(path, "expected a \"matrices\" array");
  std::size_t index = 0;
  for (const auto& m : suite["matrices"]) {
    const std::string where = path + ": matrices[" + std::to_string(index++) + "]";
    MatrixSource s;
    s.name = m.value("name", "");
    s.group = m.value("group", "");
    if (m.contains("generate")) s.spec = m["generate"].get<std::string>();
    else if (m.contains("file")) {
      std::filesystem::path f = m["file"].get<std::string>();
      if (f.is_relative()) f = std::filesystem::path(matrix_dir) / f;
      s.file = f.string();
    } else {
      throw InputError(where, "needs \"generate\" or \"file\"");
    }
    if (s.name.empty()) throw InputError(where, "needs a \"name\"");
    out.push_back(s);
  }
  return out;
}

nlohmann::json stats_json(const sparse::RowStats& s) {
  return {{"rows", s.rows}, {"cols", s.cols}, {"nnz", s.nnz}, {"row_mean", s.mean}, {"row_std", s.stddev},
          {"row_min", s.min}, {"row_max", s.max}, {"empty_rows", s.empty_rows}, {"column_spread", s.column_spread}};
}

std::string git_commit() { return apiary::source_commit(); }

JsonLines::JsonLines(const std::string& path) : file_(stdout), owned_(false) {
  if (!path.empty() && path != "-") {
    file_ = std::fopen(path.c_str(), "a");
    if (!file_) throw InputError(path, "cannot open for appending");
    owned_ = true;
  }
}
JsonLines::~JsonLines() {
  if (owned_) std::fclose(file_);
}
void JsonLines::write(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

}  // namespace apiary::spmv
