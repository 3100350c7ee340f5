// Writes sample traces for the plot and CLI tests:
//   apiary_trace_fixture OUTDIR [TASKS_PER_TYPE]
// OUTDIR/phases.json, dependencies.json (simulated runs that pass the checker),
// violation.json (a phase-order violation), malformed.json (not JSON).
#include "trace_fixtures.hpp"

#include <apiary/trace_export.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: apiary_trace_fixture OUTDIR [TASKS_PER_TYPE]\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const std::size_t per_type = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 300;
  std::filesystem::create_directories(dir);
  apiary::save_chrome_trace(apiary::test::simulated_trace(true, 8, 4, per_type, 1), dir / "phases.json");
  apiary::save_chrome_trace(apiary::test::simulated_trace(false, 8, 4, per_type, 1),
                            dir / "dependencies.json");
  auto bad = apiary::test::phased_trace();
  bad.trace.tasks[8].start_ns = apiary::test::t0 + 205;
  apiary::save_chrome_trace(bad.trace, dir / "violation.json");
  std::ofstream(dir / "malformed.json") << "{\"traceEvents\": [";
  return 0;
}
