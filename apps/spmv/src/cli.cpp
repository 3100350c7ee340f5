#include "cli.hpp"
#include "spmv.hpp"

#include <apiary/error.hpp>
#include <apiary/parse_number.hpp>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace apiary::spmv {

namespace {
std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}
}  // namespace

bool parse_options(int argc, char** argv, Options& o, const char* program, bool spmv) {
  std::string suite, matrix_dir;
  if (const char* env = std::getenv("APIARY_MATRIX_DIR")) matrix_dir = env;
  std::vector<MatrixSource> direct;
  const std::string usage = std::string("usage: ") + program +
                            " [--matrix FILE.mtx]... [--generate SPEC]... [--suite SUITE.json [--matrix-dir DIR]]\n"
                            "       [--schedules a,b,...|all] [--precision fp32,fp64] [--repeats N] [--large-repeats N]\n"
                            "       [--min-nnz N] [--max-nnz N] [--seed N] [--json OUT.jsonl|-]" +
                            (spmv ? " [--no-baseline] [--items-per-thread K] [--iterations IS]\n       [--split-row-store-max N]" : "") +
                            "\n  schedules: thread_mapped warp_mapped block_mapped virtual_warp group_mapped\n"
                            "             dynamic_virtual_warp cta_warp_scan local_warp_search direct_search block_search\n"
                            "             two_phase merge_path multi_phase" +
                            (spmv ? " heuristic" : "") + "\n  APIARY_MATRIX_DIR sets the default --matrix-dir.\n";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(arg, "needs a value\n" + usage);
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage.c_str(), stdout);
      return false;
    } else if (arg == "--matrix") {
      const std::string f = value();
      direct.push_back({f.substr(f.find_last_of('/') + 1), "", f, "file"});
    } else if (arg == "--generate") {
      const std::string s = value();
      direct.push_back({s, s, "", "generated"});
    } else if (arg == "--suite") suite = value();
    else if (arg == "--matrix-dir") matrix_dir = value();
    else if (arg == "--schedules") o.schedules = split(value());
    else if (arg == "--precision") o.precisions = split(value());
    else if (arg == "--repeats") o.repeats = parse_integer<int>(value(), arg, 1, 1 << 20);
    else if (arg == "--large-repeats") o.large_repeats = parse_integer<int>(value(), arg, 1, 1 << 20);
    else if (arg == "--max-nnz") o.max_nnz = parse_integer<std::int64_t>(value(), arg, 0, std::int64_t{1} << 40);
    else if (arg == "--min-nnz") o.min_nnz = parse_integer<std::int64_t>(value(), arg, 0, std::int64_t{1} << 40);
    else if (arg == "--seed") o.seed = parse_integer<std::uint64_t>(value(), arg);
    else if (arg == "--json") o.json = value();
    else if (spmv && arg == "--no-baseline") o.baseline = false;
    else if (spmv && arg == "--items-per-thread") o.items_per_thread = parse_integer<unsigned>(value(), arg, 1, 32);
    else if (spmv && arg == "--iterations") o.iterations = parse_integer<unsigned>(value(), arg, 1, 64);
    else if (spmv && arg == "--split-row-store-max") o.split_row_store_max = parse_integer<unsigned>(value(), arg, 0, split_row_store_limit);
    else throw InputError(arg, "unknown option\n" + usage);
  }
  if (!suite.empty()) {
    auto s = read_suite(suite, matrix_dir.empty() ? "." : matrix_dir);
    o.sources.insert(o.sources.end(), s.begin(), s.end());
  }
  o.sources.insert(o.sources.end(), direct.begin(), direct.end());
  if (o.sources.empty()) throw InputError("arguments", "no matrix given\n" + usage);
  if (o.schedules.empty() || (o.schedules.size() == 1 && o.schedules[0] == "all")) {
    o.schedules.clear();
    for (auto k : balance::all_schedules) o.schedules.emplace_back(balance::name(k));
    if (spmv) o.schedules.emplace_back("heuristic");
  }
  for (const auto& s : o.schedules)
    if (!balance::parse_schedule(s) && !(spmv && s == "heuristic")) throw InputError(s, "unknown schedule\n" + usage);
  for (const auto& p : o.precisions)
    if (p != "fp32" && p != "fp64") throw InputError(p, "precision must be fp32 or fp64");
  if (o.repeats < 1 || o.large_repeats < 1) throw InputError("--repeats", "must be >= 1");
  return true;
}

}  // namespace apiary::spmv
