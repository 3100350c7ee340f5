// apiary-table: builds N tables with phases or with individual dependencies, checks every
// table against the CPU reference and prints the report.
//   apiary-table [--tables N] [--mode phases|individual|both] [--trace FILE] [--config FILE]
#include "table.cuh"

#include <apiary/cuda_check.hpp>
#include <apiary/device_buffer.hpp>
#include <apiary/parse_number.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>

namespace {

template <class Graph, bool Individual>
bool run_mode(std::uint32_t tables, const apiary::Config& config, const std::string& trace_file) {
  using namespace table_example;
  apiary::DeviceBuffer<float> parts(std::size_t(tables) * parts_per_table), result(tables);
  std::vector<float> poison(std::size_t(tables) * parts_per_table, std::numeric_limits<float>::quiet_NaN());
  APIARY_CUDA_CHECK(cudaMemcpy(parts.get(), poison.data(), parts.bytes(), cudaMemcpyHostToDevice));
  APIARY_CUDA_CHECK(cudaMemcpy(result.get(), poison.data(), result.bytes(), cudaMemcpyHostToDevice));

  apiary::Config c = config;
  if (Individual) c.dependency_capacity = std::max(c.dependency_capacity, tables);
  apiary::Runtime<Graph> rt{c};
  std::vector<PartJob> tops(tables);
  for (std::uint32_t t = 0; t < tables; ++t) tops[t] = PartJob{Workshop{parts.get(), result.get()}, t, legs_per_table};
  rt.template seed<CreateTabletop<Individual>>(tops);
  const apiary::Report report = rt.run();
  std::cout << (Individual ? "individual dependencies" : "phases") << ":\n" << report.format();

  std::vector<float> got(tables);
  APIARY_CUDA_CHECK(cudaMemcpy(got.data(), result.get(), result.bytes(), cudaMemcpyDeviceToHost));
  const std::vector<float> want = reference_tables(tables);
  std::uint32_t wrong = 0;
  for (std::uint32_t t = 0; t < tables; ++t)
    if (!(got[t] == want[t])) ++wrong;
  bool ok = wrong == 0 && report.executed("CreateTabletop") == tables && report.executed("CreateLeg") == 4ull * tables &&
            report.executed("AssembleTable") == tables;
  std::cout << "  tables correct: " << (tables - wrong) << "/" << tables << "\n";
  if (c.trace) {
    const apiary::TraceCheckResult check = apiary::check_trace(rt.trace());
    std::cout << "  trace check: " << apiary::format(check) << "\n";
    ok = ok && check.ok;
    if (!trace_file.empty()) {
      const std::string file = trace_file + (Individual ? ".individual.json" : ".phases.json");
      apiary::save_chrome_trace(rt.trace(), file);
      std::cout << "  trace written to " << file << "\n";
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint32_t tables = 10000;
  std::string mode = "both", trace_file, config_file, scheduler;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "error: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--tables") {
      try {
        tables = apiary::parse_integer<std::uint32_t>(value(), "--tables", 1, 1u << 28);
      } catch (const apiary::InputError& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
      }
    }
    else if (arg == "--mode") mode = value();
    else if (arg == "--trace") trace_file = value();
    else if (arg == "--config") config_file = value();
    else if (arg == "--scheduler") scheduler = value();
    else {
      std::cerr << "usage: apiary-table [--tables N] [--mode phases|individual|both] [--scheduler NAME] [--trace FILE] [--config FILE]\n";
      return 2;
    }
  }
  if (mode != "phases" && mode != "individual" && mode != "both") {
    std::cerr << "error: --mode must be phases, individual or both\n";
    return 2;
  }
  try {
    apiary::Config config = config_file.empty() ? apiary::Config{} : apiary::Config::load(config_file);
    if (!trace_file.empty()) config.trace = true;
    if (!scheduler.empty()) config.scheduler = apiary::parse_scheduler(scheduler);
    config.queue_capacity = std::max<std::uint64_t>(config.queue_capacity, 4ull * tables + 16);
    bool ok = true;
    if (mode != "individual") ok = run_mode<table_example::PhasedGraph, false>(tables, config, trace_file) && ok;
    if (mode != "phases") ok = run_mode<table_example::DependencyGraph, true>(tables, config, trace_file) && ok;
    std::cout << (ok ? "OK" : "FAILED") << "\n";
    return ok ? 0 : 1;
  } catch (const apiary::CudaError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  } catch (const apiary::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
