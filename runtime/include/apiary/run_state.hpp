// Run state shared by every scheduler: pending-task counters per phase, the current phase,
// termination and stop flags, the progress counter the watchdog reads, the sticky error.
//
// A task is *pending* from the moment it is counted for its queue (just before it is
// enqueued) until the batch that ran it finishes (after everything it spawned was counted).
// So pending[phase] == 0 means: no task of that phase is queued or running, and none can
// appear except by a task that is itself pending. The counters are updated once per batch
// and once per (warp-aggregated) spawn, never per task.
//
// Phase advance (thesis 6.2): when neither the current phase nor the phaseless types have
// pending tasks, the current phase moves to the next phase (in declaration order, wrapping
// for cyclic graphs) that has pending tasks; empty phases are skipped. The run is finished
// when nothing is pending at all and the host will add no more tasks.
#pragma once

#include <apiary/device_error.hpp>
#include <apiary/phase_table.hpp>
#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

enum class RunStatus : std::uint32_t {
  running = 0,
  finished = 1,     // every queue and the waiting storage empty, nothing running
  stopped = 2,      // a task called ctx.stop()
  aborted = 3,      // the host (watchdog) stopped the run
  failed = 4,       // a device error was raised (see ErrorWord)
};

struct alignas(128) PaddedCounter {
  std::uint64_t value;
};

// Packs (epoch, phase) so that both change in one CAS. phase is no_phase (-1) when the graph
// has no phases. The top bit marks a stopped run (PhaseController::stop): no phase change
// follows a stop, as each one exchanges the whole word. So the epoch counts 2^31 phase changes
// before it wraps.
struct PhaseWord {
  static constexpr std::uint64_t stop_mark = std::uint64_t(1) << 63;
  static constexpr std::uint32_t epoch_mask = 0x7fffffffu;

  std::int32_t phase;
  std::uint32_t epoch;  // number of phase changes so far (modulo 2^31)
  APIARY_HD static PhaseWord unpack(std::uint64_t w) {
    return {static_cast<std::int32_t>(static_cast<std::uint32_t>(w)), static_cast<std::uint32_t>(w >> 32) & epoch_mask};
  }
  APIARY_HD std::uint64_t pack() const {
    return (std::uint64_t(epoch & epoch_mask) << 32) | static_cast<std::uint32_t>(phase);
  }
  APIARY_HD static bool stopped(std::uint64_t w) { return (w & stop_mark) != 0; }
};

struct RunState {
  PaddedCounter pending_total;
  PaddedCounter pending[max_phases + 1];  // [0] phaseless, [p + 1] phase p
  alignas(128) std::uint64_t phase_word;  // PhaseWord
  alignas(128) std::uint32_t status;      // RunStatus
  std::uint32_t host_open;                // 1 while the host may still add tasks
  alignas(128) std::uint64_t progress;    // batches finished (watchdog heartbeat)
  alignas(128) ErrorWord error;
  // Blocks of per-queue worker kernels (timesliced, device controller) now draining each queue.
  alignas(128) std::uint32_t live_blocks[max_queues];
};

// What the idle step decides from, read at once by a caller that runs alone: no worker runs
// and none starts before it has decided (the timesliced graph mode's control step between two
// rounds), so nothing it reads changes meanwhile but the host's abort.
struct IdleCounters {
  std::uint32_t status_word = 0;
  std::uint32_t error_code = 0;
  std::uint32_t host_open = 0;
  std::uint64_t pending_total = 0;
  std::uint64_t phase_word = 0;
  std::uint64_t work = 0;  // bit s: pending[s] != 0 (s = 0 phaseless, p + 1 phase p)
  std::int64_t parked = 0;
};

// The operations on RunState, shared by all schedulers and by the CPU stress tests.
struct PhaseController {
  RunState* state = nullptr;
  const PhaseTableView* table = nullptr;

  APIARY_HD std::uint64_t& pending(std::uint32_t slot) const { return state->pending[slot].value; }

  // Counts k tasks about to be enqueued to queue q.
  APIARY_HD void add_pending(std::uint32_t q, std::uint64_t k) const {
    DeviceAtomic<std::uint64_t>(state->pending_total.value).fetch_add(k, mo::relaxed);
    DeviceAtomic<std::uint64_t>(pending(table->pending_slot(q))).fetch_add(k, mo::relaxed);
  }

  // A batch of k tasks of queue q finished (their spawns are already counted).
  // The decrements publish the batch (its spawns' counts, its writes) to whoever reads the
  // counters with acquire (phase advance, the end of the run): one release fence for all of
  // them (platform.hpp), not an acq_rel round trip each.
  APIARY_HD void finish(std::uint32_t q, std::uint64_t k) const {
    release_fence();
    DeviceAtomic<std::uint64_t>(pending(table->pending_slot(q))).fetch_sub(k, mo_after_release_fence());
    DeviceAtomic<std::uint64_t>(state->pending_total.value).fetch_sub(k, mo_after_release_fence());
    heartbeat();
  }

  // The watchdog's progress counter: something finished.
  APIARY_HD void heartbeat() const { DeviceAtomic<std::uint64_t>(state->progress).fetch_add(1, mo::relaxed); }

  // The same, for a batch whose tasks handed one task of queue `next` off to the block
  // (handoff.hpp): that task is counted here, not when it was spawned. Its count is added
  // before the batch's leaves, so that pending never reads zero for its phase in between; a
  // chain of hand-offs within one phase touches no pending counter at all.
  APIARY_HD void finish_handing_off(std::uint32_t q, std::uint64_t k, std::uint32_t next) const {
    const std::uint32_t from = table->pending_slot(q), to = table->pending_slot(next);
    if (from != to) {
      DeviceAtomic<std::uint64_t>(pending(to)).fetch_add(1, mo::relaxed);
      release_fence();  // the increment above is visible before the decrement below
      DeviceAtomic<std::uint64_t>(pending(from)).fetch_sub(k, mo_after_release_fence());
    } else if (k > 1) {
      release_fence();
      DeviceAtomic<std::uint64_t>(pending(from)).fetch_sub(k - 1, mo_after_release_fence());
    }
    if (k > 1) DeviceAtomic<std::uint64_t>(state->pending_total.value).fetch_sub(k - 1, mo_after_release_fence());
    heartbeat();
  }

  APIARY_HD PhaseWord current() const { return PhaseWord::unpack(load_acquire(state->phase_word)); }

  APIARY_HD bool eligible(std::uint32_t q, PhaseWord now) const { return table->runs_in(q, now.phase); }

  APIARY_HD RunStatus status() const { return static_cast<RunStatus>(load_acquire(state->status)); }

  // What a worker looking for a batch needs: running() and current() in one memory round
  // trip. The three loads are issued before any of them is used (status and error relaxed:
  // a worker that sees the run end reads nothing after it; the phase with acquire).
  struct Look {
    bool running;
    PhaseWord phase;
  };
  APIARY_HD Look look() const {
    const std::uint32_t status_word = load_relaxed(state->status);
    const std::uint32_t error_code = load_relaxed(state->error.code);
    const std::uint64_t phase_word = load_acquire(state->phase_word);
    return {goes_on(status_word, error_code), PhaseWord::unpack(phase_word)};
  }

  // True while the run goes on; turns a raised device error into the failed status.
  APIARY_HD bool running() const { return goes_on(load_acquire(state->status), load_relaxed(state->error.code)); }

  // The verdict of running() and look() from the words they read.
  APIARY_HD bool goes_on(std::uint32_t status_word, std::uint32_t error_code) const {
    if (status_word != static_cast<std::uint32_t>(RunStatus::running)) return false;
    if (error_code == 0) return true;
    set_status(RunStatus::failed);
    return false;
  }

  // ctx.stop(): the run ends once the running tasks finish, and no phase change follows.
  // Why the mark in the phase word: a phase change after the stop would let a block that read
  // the status before it (look() and on_idle read it before the phase word, without ordering)
  // run a queued task of the new phase. The stopping task is pending until its batch
  // finishes, and its finish (a release) comes after the mark. Every phase change reads a
  // count with acquire that only that finish could have lowered, then exchanges the phase
  // word: it finds the mark and changes nothing, or fails its exchange from an older word.
  APIARY_HD void stop() const {
    set_status(RunStatus::stopped);
    DeviceAtomic<std::uint64_t>(state->phase_word).fetch_or(PhaseWord::stop_mark, mo::relaxed);
  }

  // Sets a terminal status unless one is set already.
  APIARY_HD void set_status(RunStatus s) const {
    std::uint32_t expected = 0;
    DeviceAtomic<std::uint32_t>(state->status)
        .compare_exchange_strong(expected, static_cast<std::uint32_t>(s), mo::acq_rel, mo::relaxed);
  }

  // Called by an idle worker while others run. Advances the phase if the current one is
  // done, detects the end of the run, and returns whether the caller should keep looking for
  // work. `parked` reads the number of tasks waiting in the waiting storage.
  //
  // Every dependent load here is a memory round trip on the path of a phase change (an idle
  // block advances the phase the moment the last task of the old one finished), so the common
  // step reads in as few trips as its ordering allows: status, error, pending_total and host
  // input first, together with the phase word (acquire: the counters read after it are at
  // least as new as the phase it names); then the phase change (advance_live). A run that may
  // be over (nothing pending, no more host input) is decided on ordered reads, as the
  // rarest and least forgiving step.
  // `*advanced_to`, where given: the phase word after the step's phase change, if it saw one
  // (its own, or the one a competing change wrote) and the run was not stopped meanwhile (a
  // word with the stop mark is no hint: the caller's next look sees the stop); left as is
  // otherwise. A hint: the caller may look for work in that phase at once, and confirms the
  // phase after a claim.
  template <class ParkedCount>
  APIARY_HD bool on_idle(ParkedCount&& parked, std::uint64_t* advanced_to = nullptr) const {
    const std::uint32_t status_word = load_relaxed(state->status);
    const std::uint32_t error_code = load_relaxed(state->error.code);
    const std::uint64_t total = load_relaxed(state->pending_total.value);
    const std::uint32_t open = load_relaxed(state->host_open);
    const std::uint64_t phase_word = load_acquire(state->phase_word);
    if (!goes_on(status_word, error_code)) return false;
    if (total == 0) {
      if (open != 0) return true;  // the host may still inject work: nothing to decide yet
      return idle_step(LiveReads<ParkedCount>{this, parked});
    }
    const std::uint64_t after = advance_live(phase_word);
    if (advanced_to != nullptr && after != phase_word && !PhaseWord::stopped(after)) *advanced_to = after;
    return true;
  }

  // on_idle for a caller that runs alone, from counters it read at once (IdleCounters): the
  // same decisions without a chain of dependent loads, each a memory round trip on the GPU.
  // `phase_after`: the phase word once the step is done (changed only by a phase advance).
  APIARY_HD bool on_idle_alone(const IdleCounters& c, std::uint64_t& phase_after) const {
    phase_after = c.phase_word;
    return idle_step(ReadAtOnce{this, &c}, &phase_after);
  }

  // Moves to the next phase with pending tasks if the current one is done.
  APIARY_HD void try_advance() const {
    advance_from(load_acquire(state->phase_word), [&](std::uint32_t slot) { return load_acquire(pending(slot)) != 0; });
  }

  // try_advance from the phase word `seen_word` (read with acquire) while workers run, in two
  // memory round trips where the next phase in order has work: the phaseless counter first
  // (only where the graph has phaseless queues: no other task is counted there), then the
  // current phase's counter (acquire) together with the next phase's (relaxed, issued before
  // it). A non-zero count of a phase other than the current one is never stale: its tasks run
  // only while it is current, so it cannot have dropped since the phase word was written. A
  // zero may be stale (a spawn the current phase's last batch published with its decrement),
  // so a step that would skip a phase, or finds no next phase, decides on ordered reads.
  // Returns the phase word after the step: `seen_word` if it changed nothing, the new word if
  // it advanced, or the word a competing change wrote (its exchange failed).
  APIARY_HD std::uint64_t advance_live(std::uint64_t seen_word) const {
    const std::uint32_t n = table->num_phases;
    if (n == 0 || PhaseWord::stopped(seen_word)) return seen_word;
    if (table->phaseless.size() != 0 && load_acquire(pending(0)) != 0) return seen_word;
    const PhaseWord seen = PhaseWord::unpack(seen_word);
    const std::int32_t next = seen.phase == no_phase                     ? no_phase
                              : std::uint32_t(seen.phase) + 1 < n        ? seen.phase + 1
                              : table->cyclic && n > 1                   ? 0
                                                                         : no_phase;
    if (next != no_phase) {
      const std::uint64_t next_count = load_relaxed(pending(std::uint32_t(next) + 1));
      if (load_acquire(pending(std::uint32_t(seen.phase) + 1)) != 0) return seen_word;
      if (next_count != 0) {
        const std::uint64_t wanted = PhaseWord{next, seen.epoch + 1}.pack();
        std::uint64_t expected = seen_word;
        const bool advanced = DeviceAtomic<std::uint64_t>(state->phase_word)
                                  .compare_exchange_strong(expected, wanted, mo::acq_rel, mo::relaxed);
        return advanced ? wanted : expected;
      }
    }
    return advance_from(seen_word, [&](std::uint32_t slot) { return load_acquire(pending(slot)) != 0; });
  }

  // The first phase after `from` (wrapping if cyclic) with pending tasks, or no_phase.
  APIARY_HD std::int32_t next_phase_with_work(std::int32_t from) const {
    return next_phase_where(from, [&](std::uint32_t slot) { return load_acquire(pending(slot)) != 0; });
  }

  // Non-cyclic graphs: tasks pending in a phase that already ended can never run.
  APIARY_HD void report_unreachable_work(std::int32_t current) const {
    report_unreachable_where(current, [&](std::uint32_t slot) { return load_acquire(pending(slot)) != 0; });
  }

 private:
  // The idle step's reads, on demand, in on_idle's order (acquire: workers run meanwhile).
  template <class ParkedCount>
  struct LiveReads {
    const PhaseController* pc;
    ParkedCount& parked_count;
    APIARY_HD bool running() const { return pc->running(); }
    APIARY_HD std::uint64_t pending_total() const { return load_acquire(pc->state->pending_total.value); }
    APIARY_HD bool host_open() const { return load_acquire(pc->state->host_open) != 0; }
    APIARY_HD std::int64_t parked() const { return std::int64_t(parked_count()); }
    APIARY_HD std::uint64_t phase_word() const { return load_acquire(pc->state->phase_word); }
    APIARY_HD bool has_work(std::uint32_t slot) const { return load_acquire(pc->pending(slot)) != 0; }
  };
  // The same reads from IdleCounters.
  struct ReadAtOnce {
    const PhaseController* pc;
    const IdleCounters* c;
    APIARY_HD bool running() const { return pc->goes_on(c->status_word, c->error_code); }
    APIARY_HD std::uint64_t pending_total() const { return c->pending_total; }
    APIARY_HD bool host_open() const { return c->host_open != 0; }
    APIARY_HD std::int64_t parked() const { return c->parked; }
    APIARY_HD std::uint64_t phase_word() const { return c->phase_word; }
    APIARY_HD bool has_work(std::uint32_t slot) const { return (c->work >> slot) & 1u; }
  };

  // The idle step's decisions, whichever way its counters are read.
  template <class Reads>
  APIARY_HD bool idle_step(const Reads& r, std::uint64_t* phase_after = nullptr) const {
    if (!r.running()) return false;
    if (r.pending_total() == 0) {
      if (r.host_open()) return true;  // the host may still inject work
      const std::int64_t parked = r.parked();
      if (parked > 0) {
        // Nothing runs or is queued, so nothing can ever resolve the parked tasks' dependencies.
        raise_error(state->error, ErrorCode::parked_without_producer, 0, 0, std::uint64_t(parked));
        set_status(RunStatus::failed);
        return false;
      }
      set_status(RunStatus::finished);
      return false;
    }
    const std::uint64_t after = advance_from(r.phase_word(), [&](std::uint32_t slot) { return r.has_work(slot); });
    if (phase_after) *phase_after = after;
    return true;
  }

  // try_advance from the phase word `seen_word`; has_work(slot): pending[slot] != 0. Returns
  // the phase word after it (the new one, or what a competing advance wrote).
  template <class HasWork>
  APIARY_HD std::uint64_t advance_from(std::uint64_t seen_word, HasWork&& has_work) const {
    if (table->num_phases == 0 || PhaseWord::stopped(seen_word)) return seen_word;
    const PhaseWord seen = PhaseWord::unpack(seen_word);
    // The phaseless counter is read first: a phaseless task can only appear through a task
    // that is pending itself.
    if (has_work(0)) return seen_word;
    if (seen.phase != no_phase && has_work(std::uint32_t(seen.phase) + 1)) return seen_word;
    const std::int32_t next = next_phase_where(seen.phase, has_work);
    if (next == no_phase) {
      report_unreachable_where(seen.phase, has_work);
      return seen_word;
    }
    const std::uint64_t wanted = PhaseWord{next, seen.epoch + 1}.pack();
    std::uint64_t expected = seen_word;
    const bool advanced = DeviceAtomic<std::uint64_t>(state->phase_word)
                              .compare_exchange_strong(expected, wanted, mo::acq_rel, mo::relaxed);
    return advanced ? wanted : expected;
  }

  template <class HasWork>
  APIARY_HD std::int32_t next_phase_where(std::int32_t from, HasWork&& has_work) const {
    const auto n = std::int32_t(table->num_phases);
    for (std::int32_t step = 1; step <= n; ++step) {
      std::int32_t p = from + step;
      if (p >= n) {
        if (!table->cyclic && from != no_phase) return no_phase;
        p -= n;
        if (p >= n) p %= n;
      }
      if (has_work(std::uint32_t(p) + 1)) return p;
    }
    return no_phase;
  }

  template <class HasWork>
  APIARY_HD void report_unreachable_where(std::int32_t current, HasWork&& has_work) const {
    if (table->cyclic || current == no_phase) return;
    for (std::int32_t p = 0; p < current; ++p) {
      if (has_work(std::uint32_t(p) + 1)) {
        raise_error(state->error, ErrorCode::phase_already_ended, std::uint32_t(p), 0,
                    load_relaxed(pending(std::uint32_t(p) + 1)));
        set_status(RunStatus::failed);
        return;
      }
    }
  }
};

// Host helper: the phase a run starts in: the first phase with seeded tasks (no_phase if
// none has any, e.g. only phaseless seeds).
inline std::int32_t first_phase_with_work(const PhaseTableView& table, const std::uint64_t* seeded_per_slot) {
  for (std::uint32_t p = 0; p < table.num_phases; ++p)
    if (seeded_per_slot[p + 1] != 0) return std::int32_t(p);
  return no_phase;
}

}  // namespace apiary
