// The sticky error word: the first failure on the device (a full queue, a full waiting
// storage, an exhausted pool, a stall) is recorded once; schedulers stop when they see it and
// the host turns it into an exception (runtime/src/device_error.cpp).
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

enum class ErrorCode : std::uint32_t {
  none = 0,
  queue_full = 1,              // where = queue index, capacity = queue capacity
  waiting_storage_full = 2,    // capacity = waiting storage slots
  dependency_pool_full = 3,    // capacity = runtime dependency pool size
  parked_without_producer = 4, // nothing runs or is queued, but tasks wait on dependencies
  phase_already_ended = 5,     // where = phase: a task was queued for a phase that cannot run again
  watchdog = 6,                // no progress for the configured time
  launch_failed = 7,           // a device-side launch failed (PDC)
  trace_overflow = 8,          // informational; never stops a run
};

struct ErrorWord {
  std::uint32_t code;      // ErrorCode, 0 while no error
  std::uint32_t where;     // queue or phase index
  std::uint64_t capacity;  // capacity of the exhausted structure
  std::uint64_t detail;    // e.g. items that were requested
};

// Records `code` unless an error was recorded before. Returns true for the first reporter.
APIARY_HD inline bool raise_error(ErrorWord& word, ErrorCode code, std::uint32_t where,
                                  std::uint64_t capacity, std::uint64_t detail = 0) {
  std::uint32_t expected = 0;
  DeviceAtomic<std::uint32_t> code_ref(word.code);
  // Claim the word with a sentinel, fill it, then publish the code: readers that see a code
  // also see its fields.
  if (!code_ref.compare_exchange_strong(expected, ~0u, mo::acq_rel, mo::relaxed)) return false;
  word.where = where;
  word.capacity = capacity;
  word.detail = detail;
  code_ref.store(static_cast<std::uint32_t>(code), mo::release);
  return true;
}

APIARY_HD inline bool has_error(ErrorWord& word) { return load_relaxed(word.code) != 0; }

}  // namespace apiary
