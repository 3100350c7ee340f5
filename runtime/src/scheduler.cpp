#include <apiary/error.hpp>
#include <apiary/scheduler.hpp>

namespace apiary {

std::string_view to_string(Scheduler s) {
  switch (s) {
    case Scheduler::megakernel: return "megakernel";
    case Scheduler::timesliced: return "timesliced";
    case Scheduler::device_controller: return "device_controller";
  }
  return "unknown";
}

Scheduler parse_scheduler(std::string_view name) {
  if (name == "megakernel" || name == "mk") return Scheduler::megakernel;
  if (name == "timesliced" || name == "tsk") return Scheduler::timesliced;
  if (name == "device_controller" || name == "pdc") return Scheduler::device_controller;
  throw InputError("scheduler '" + std::string(name) + "'",
                   "unknown; use megakernel (mk), timesliced (tsk) or device_controller (pdc)");
}

std::vector<Scheduler> all_schedulers() {
  return {Scheduler::megakernel, Scheduler::timesliced, Scheduler::device_controller};
}

}  // namespace apiary
