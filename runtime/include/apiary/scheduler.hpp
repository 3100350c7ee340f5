// The schedulers that can run a graph, chosen at run time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace apiary {

enum class Scheduler {
  megakernel,          // MK: persistent grid, every block dequeues and runs tasks
  timesliced,          // TSK: host controller, one kernel per task type per round
  timesliced_graph,    // TSK graph: the same rounds as a CUDA graph the host launches ahead, sized on the device
  device_controller,   // PDC spin: device controller launching workers (dynamic parallelism), polling
  device_controller_wave,  // PDC wave: the controller tail-launches itself after each wave of workers
};

std::string_view to_string(Scheduler s);
// Parses "megakernel"/"mk", "timesliced"/"tsk", "timesliced_graph"/"tsk_graph", "device_controller"/"pdc",
// "device_controller_wave"/"pdc_wave"; throws InputError
// listing the valid names otherwise.
Scheduler parse_scheduler(std::string_view name);
std::vector<Scheduler> all_schedulers();
// A comma-separated list of those names, or "all" (empty items are skipped); InputError for an
// unknown name or a list that names none.
std::vector<Scheduler> parse_schedulers(std::string_view list);

}  // namespace apiary
