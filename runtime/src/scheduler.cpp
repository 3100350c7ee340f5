#include <apiary/error.hpp>
#include <apiary/scheduler.hpp>

namespace apiary {

std::string_view to_string(Scheduler s) {
  switch (s) {
    case Scheduler::megakernel: return "megakernel";
    case Scheduler::timesliced: return "timesliced";
    case Scheduler::timesliced_graph: return "timesliced_graph";
    case Scheduler::device_controller: return "device_controller";
    case Scheduler::device_controller_wave: return "device_controller_wave";
  }
  return "unknown";
}

Scheduler parse_scheduler(std::string_view name) {
  if (name == "megakernel" || name == "mk") return Scheduler::megakernel;
  if (name == "timesliced" || name == "tsk") return Scheduler::timesliced;
  if (name == "timesliced_graph" || name == "tsk_graph") return Scheduler::timesliced_graph;
  if (name == "device_controller" || name == "pdc" || name == "pdc_spin") return Scheduler::device_controller;
  if (name == "device_controller_wave" || name == "pdc_wave") return Scheduler::device_controller_wave;
  throw InputError("scheduler '" + std::string(name) + "'",
                   "unknown; use megakernel (mk), timesliced (tsk), timesliced_graph (tsk_graph), device_controller (pdc, "
                   "pdc_spin) or "
                   "device_controller_wave (pdc_wave)");
}

std::vector<Scheduler> all_schedulers() {
  return {Scheduler::megakernel, Scheduler::timesliced, Scheduler::timesliced_graph, Scheduler::device_controller,
          Scheduler::device_controller_wave};
}

std::vector<Scheduler> parse_schedulers(std::string_view list) {
  if (list == "all") return all_schedulers();
  std::vector<Scheduler> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (!name.empty()) out.push_back(parse_scheduler(name));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  if (out.empty()) throw InputError("scheduler list", "names no scheduler");
  return out;
}

}  // namespace apiary
