// apiary-trace: works on scheduling traces written by a traced run (Config::trace / --trace).
//
//   apiary-trace check FILE.json [--allow-dropped] [--max-messages N]
//       verifies phase order and individual dependencies; exit 0 ok, 1 violations, 2 bad input
//   apiary-trace csv FILE.json OUT.csv     one row per task
//   apiary-trace summary FILE.json         tasks per type and SM, time span, utilisation
#include <apiary/error.hpp>
#include <apiary/trace_check.hpp>
#include <apiary/trace_export.hpp>
#include <apiary/trace_summary.hpp>

#include <charconv>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr int exit_ok = 0;
constexpr int exit_violations = 1;
constexpr int exit_bad_input = 2;

constexpr const char* usage =
    "usage:\n"
    "  apiary-trace check FILE.json [--allow-dropped] [--max-messages N]\n"
    "      verify phase order and dependencies; exit 0 ok, 1 violations, 2 bad input\n"
    "  apiary-trace csv FILE.json OUT.csv\n"
    "      write one CSV row per task\n"
    "  apiary-trace summary FILE.json\n"
    "      tasks per type and SM, time span, utilisation\n";

int bad_usage(const std::string& what) {
  std::cerr << "apiary-trace: " << what << "\n" << usage;
  return exit_bad_input;
}

int run_check(const std::vector<std::string>& args) {
  apiary::TraceCheckOptions options;
  std::string file;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--allow-dropped") {
      options.dropped_is_violation = false;
    } else if (args[i] == "--max-messages") {
      if (i + 1 >= args.size()) return bad_usage("--max-messages needs a number");
      const std::string& text = args[++i];
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), options.max_messages);
      if (ec != std::errc() || end != text.data() + text.size())
        return bad_usage("--max-messages: not a number: " + text);
    } else if (file.empty() && !args[i].starts_with("--")) {
      file = args[i];
    } else {
      return bad_usage("check: unexpected argument " + args[i]);
    }
  }
  if (file.empty()) return bad_usage("check: missing FILE.json");
  const apiary::TraceCheckResult result = apiary::check_trace(apiary::load_chrome_trace(file), options);
  std::cout << file << ": " << apiary::format(result);
  return result.ok ? exit_ok : exit_violations;
}

int run_csv(const std::vector<std::string>& args) {
  if (args.size() != 2) return bad_usage("csv: expected FILE.json OUT.csv");
  apiary::save_trace_csv(apiary::load_chrome_trace(args[0]), args[1]);
  return exit_ok;
}

int run_summary(const std::vector<std::string>& args) {
  if (args.size() != 1) return bad_usage("summary: expected FILE.json");
  const apiary::Trace trace = apiary::load_chrome_trace(args[0]);
  std::cout << apiary::format(trace, apiary::summarize_trace(trace));
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return bad_usage("missing command");
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << usage;
    return exit_ok;
  }
  try {
    if (command == "check") return run_check(args);
    if (command == "csv") return run_csv(args);
    if (command == "summary") return run_summary(args);
    return bad_usage("unknown command " + command);
  } catch (const apiary::InputError& e) {
    std::cerr << "apiary-trace: " << e.what() << '\n';
    return exit_bad_input;
  } catch (const std::exception& e) {
    std::cerr << "apiary-trace: " << e.what() << '\n';
    return exit_bad_input;
  }
}
