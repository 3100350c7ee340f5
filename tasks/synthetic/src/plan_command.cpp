#include <apiary/synthetic/plan_command.hpp>

#include <apiary/error.hpp>
#include <apiary/synthetic/model.hpp>
#include <apiary/synthetic/spec.hpp>

namespace apiary::synthetic {

int run_plan_command(const std::filesystem::path& config, std::ostream& out, std::ostream& err) {
  try {
    const Spec spec = load_spec(config);
    const Plan p = plan(spec);
    check_capacities(spec, p);
    out << format_plan(spec, p);
    return 0;
  } catch (const Error& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace apiary::synthetic
