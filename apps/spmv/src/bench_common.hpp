// Benchmark plumbing shared by apiary-spmv and apiary-visit: device info, copy bandwidth,
// timing, matrix sources (files, generator specs, suite JSON), JSON lines output.
#pragma once

#include <apiary/sparse/formats.hpp>
#include <apiary/sparse/stats.hpp>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace apiary::spmv {

struct DeviceInfo {
  std::string name;
  int sm_count = 0;
  double peak_gbps = 0;  // from memory clock and bus width (datasheet-style)
};
DeviceInfo device_info();

// Device-to-device copy bandwidth (read + write bytes / time), median of `repeats` copies of
// `bytes`: the practical roofline the SpMV bandwidth is compared with.
double measure_copy_gbps(std::size_t bytes = std::size_t{1} << 30, int repeats = 15);

// Median / minimum of `repeats` timings of f (ms, CUDA events) after `warmup` calls.
struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  int repeats = 0;
};
Timing time_gpu(const std::function<void()>& f, int repeats, int warmup = 2);

struct MatrixSource {
  std::string name;
  std::string spec;  // generator spec, or empty
  std::string file;  // Matrix Market path, or empty
  std::string group; // suite group (e.g. "regular", "power-law", "real")
};
sparse::Csr<double> load(const MatrixSource& source);

// Suite JSON: {"matrices": [{"name":..., "generate": spec | "file": name, "group":...}]};
// relative "file" entries are resolved in matrix_dir.
std::vector<MatrixSource> read_suite(const std::string& path, const std::string& matrix_dir);

nlohmann::json stats_json(const sparse::RowStats& s);
std::string git_commit();

// Appends JSON lines to a file (or stdout when path is empty or "-").
class JsonLines {
 public:
  explicit JsonLines(const std::string& path);
  ~JsonLines();
  void write(const nlohmann::json& record);

 private:
  std::FILE* file_;
  bool owned_;
};

}  // namespace apiary::spmv
