#include <apiary/error.hpp>
#include <apiary/phase_table.hpp>

#include <algorithm>
#include <sstream>

namespace apiary {

namespace {

void validate_queue(const QueueLayout& q) {
  const std::string where = "task type '" + q.name + "'";
  if (q.worker_size < 1 || q.worker_size > 1024)
    throw InputError(where, "worker size " + std::to_string(q.worker_size) +
                                " is out of range: a task runs on 1 to 1024 threads");
  if (q.item_size == 0) throw InputError(where, "work item has size 0");
  if (q.capacity == 0)
    throw InputError(where, "queue capacity is 0; set '" + q.capacity_key + "' to at least 1");
}

}  // namespace

PhaseTable::PhaseTable(std::vector<QueueLayout> queues, bool cyclic) : cyclic_(cyclic) {
  if (queues.empty()) throw InputError("task graph", "has no task types");
  if (queues.size() > max_queues)
    throw InputError("task graph", "has " + std::to_string(queues.size()) + " task types; at most " +
                                       std::to_string(max_queues) + " are supported");
  std::int32_t last_phase = no_phase;
  for (const auto& q : queues) {
    validate_queue(q);
    if (q.phase < no_phase) throw InputError("task type '" + q.name + "'", "negative phase index");
    last_phase = std::max(last_phase, q.phase);
  }
  const auto num_phases = static_cast<std::uint32_t>(last_phase + 1);
  if (num_phases > max_phases)
    throw InputError("task graph", "has " + std::to_string(num_phases) + " phases; at most " +
                                       std::to_string(max_phases) + " are supported");
  std::stable_sort(queues.begin(), queues.end(),
                   [](const QueueLayout& a, const QueueLayout& b) { return a.phase < b.phase; });
  queues_ = std::move(queues);
  phases_.assign(num_phases, QueueRange{});
  std::uint32_t index = 0;
  while (index < queues_.size() && queues_[index].phase == no_phase) ++index;
  phaseless_ = {0, index};
  for (std::uint32_t p = 0; p < num_phases; ++p) {
    const std::uint32_t begin = index;
    while (index < queues_.size() && queues_[index].phase == std::int32_t(p)) ++index;
    phases_[p] = {begin, index};  // an empty phase is allowed: it is skipped at run time
  }
}

std::uint32_t PhaseTable::max_worker_size() const {
  std::uint32_t m = 1;
  for (const auto& q : queues_) m = std::max(m, q.worker_size);
  return m;
}

std::uint32_t PhaseTable::max_item_size() const {
  std::uint32_t m = 0;
  for (const auto& q : queues_) m = std::max(m, q.item_size);
  return m;
}

std::uint32_t PhaseTable::queue_index(const std::string& name) const {
  for (std::uint32_t q = 0; q < queues_.size(); ++q)
    if (queues_[q].name == name) return q;
  std::string known;
  for (const auto& q : queues_) known += (known.empty() ? "" : ", ") + q.name;
  throw InputError("task type '" + name + "'", "unknown; the graph has: " + known);
}

PhaseTableView PhaseTable::view() const {
  PhaseTableView v{};
  v.num_queues = num_queues();
  v.num_phases = num_phases();
  v.cyclic = cyclic_;
  v.phaseless = phaseless_;
  for (std::uint32_t q = 0; q < queues_.size(); ++q) {
    v.queue_phase[q] = queues_[q].phase;
    v.worker_size[q] = queues_[q].worker_size;
    v.shared_bytes[q] = queues_[q].shared_bytes;
    v.code[q] = queues_[q].code;
  }
  for (std::uint32_t p = 0; p < phases_.size(); ++p) v.phases[p] = phases_[p];
  return v;
}

std::string PhaseTable::format() const {
  std::ostringstream out;
  out << "phase       index  start  end  task types (queue index)\n";
  auto row = [&](const std::string& name, int index, QueueRange r) {
    out << name << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << index
        << std::string(index < 0 ? 5 : 6, ' ') << r.begin << "      " << r.end << "    ";
    for (std::uint32_t q = r.begin; q < r.end; ++q) out << queues_[q].name << " (" << q << ") ";
    out << "\n";
  };
  row("phaseless", -1, phaseless_);
  for (std::uint32_t p = 0; p < phases_.size(); ++p) row("phase " + std::to_string(p), int(p), phases_[p]);
  if (cyclic_) out << "cyclic: after the last phase the first runs again\n";
  return out.str();
}

}  // namespace apiary
