// The phase table: the data layout every scheduler reads (thesis Table 4.1). Queues are
// numbered phaseless first, then phase by phase, so each phase is a contiguous queue range.
// Built by the C++ front end (graph.hpp: PhaseQueue<...>) or from JSON (synthetic trees).
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary {

inline constexpr std::uint32_t max_queues = 64;
inline constexpr std::uint32_t max_phases = 62;
inline constexpr std::int32_t no_phase = -1;  // phaseless queues; also "no phase is current"

struct QueueRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  APIARY_HD bool contains(std::uint32_t q) const { return q >= begin && q < end; }
  APIARY_HD std::uint32_t size() const { return end - begin; }
  // The queues of the range as a bit mask (bit q).
  APIARY_HD std::uint64_t mask() const {
    if (size() == 0) return 0;
    const std::uint64_t ones = size() >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << size()) - 1;
    return ones << begin;
  }
};

// What a scheduler needs to know about one queue.
struct QueueLayout {
  std::string name;
  std::uint32_t item_size = 0;       // bytes of the work item
  std::uint64_t capacity = 0;        // requested capacity (rounded up to a power of two)
  std::uint32_t worker_size = 1;     // threads per task, 1..1024
  std::uint32_t shared_bytes = 0;    // shared memory per task
  std::int32_t phase = no_phase;     // phase index or no_phase
  std::uint32_t code = 0;            // which compiled task type runs this queue's items
  std::string capacity_key;          // config key that sets `capacity` (for error messages)
};

// The device-side copy: small, fixed-size, passed by value to kernels.
struct PhaseTableView {
  std::uint32_t num_queues = 0;
  std::uint32_t num_phases = 0;
  bool cyclic = false;
  QueueRange phaseless;
  std::int32_t queue_phase[max_queues];
  std::uint32_t worker_size[max_queues];
  std::uint32_t shared_bytes[max_queues];
  std::uint32_t code[max_queues];
  QueueRange phases[max_phases];

  // Counter slot of a queue's phase: 0 for phaseless, phase + 1 otherwise.
  APIARY_HD std::uint32_t pending_slot(std::uint32_t q) const { return std::uint32_t(queue_phase[q] + 1); }

  // Whether tasks of queue q may run while `phase` is current (no_phase: none is).
  APIARY_HD bool runs_in(std::uint32_t q, std::int32_t phase) const {
    return queue_phase[q] == no_phase || queue_phase[q] == phase;
  }
  // The same for every queue at once, as a bit mask (bit q): the phaseless queues and the
  // phase's range (queues are numbered phaseless first, then phase by phase).
  APIARY_HD std::uint64_t queues_running_in(std::int32_t phase) const {
    const std::uint64_t of_phase = phase >= 0 && std::uint32_t(phase) < num_phases ? phases[phase].mask() : 0;
    return phaseless.mask() | of_phase;
  }
};

class PhaseTable {
 public:
  // Validates and orders `queues` (stable by phase, phaseless first). Throws InputError for
  // too many queues/phases, gaps in phase numbering or out-of-range worker sizes.
  PhaseTable(std::vector<QueueLayout> queues, bool cyclic);

  const std::vector<QueueLayout>& queues() const { return queues_; }
  const std::vector<QueueRange>& phases() const { return phases_; }
  QueueRange phaseless() const { return phaseless_; }
  bool cyclic() const { return cyclic_; }
  std::uint32_t num_queues() const { return static_cast<std::uint32_t>(queues_.size()); }
  std::uint32_t num_phases() const { return static_cast<std::uint32_t>(phases_.size()); }
  std::uint32_t max_worker_size() const;
  std::uint32_t max_item_size() const;
  // Index of the queue called `name`; throws InputError naming the known queues otherwise.
  std::uint32_t queue_index(const std::string& name) const;

  PhaseTableView view() const;
  // The thesis's Table 4.1: phase, index, queue range, task types.
  std::string format() const;

 private:
  std::vector<QueueLayout> queues_;
  std::vector<QueueRange> phases_;
  QueueRange phaseless_;
  bool cyclic_ = false;
};

}  // namespace apiary
