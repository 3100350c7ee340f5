// Host-memory instances of the device structures, so the same code runs on CPU threads.
#pragma once

#include <apiary/dependency.hpp>
#include <apiary/queue.hpp>
#include <apiary/run_state.hpp>
#include <apiary/waiting_storage.hpp>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace apiary::testing {

// Stress tests scale their operation counts by APIARY_STRESS_SCALE (ThreadSanitizer runs
// use a fraction: TSan is 5-15x slower).
inline std::uint64_t scaled(std::uint64_t ops) {
  const char* s = std::getenv("APIARY_STRESS_SCALE");
  const double f = s ? std::atof(s) : 1.0;
  const auto n = static_cast<std::uint64_t>(double(ops) * f);
  return n > 0 ? n : 1;
}

inline unsigned stress_threads() { return 8; }

struct HostQueue {
  std::unique_ptr<QueueCounters> counters = std::make_unique<QueueCounters>();
  std::vector<std::uint64_t> seq;
  std::vector<std::uint64_t> words;  // item storage, 8-byte aligned
  QueueView view;

  HostQueue(std::uint64_t capacity, std::uint32_t item_size, ErrorWord* error, std::uint32_t index = 0) {
    const std::uint64_t cap = queue_ring_capacity(capacity);
    *counters = QueueCounters{};
    seq.assign(cap, 0);  // zero-filled = empty
    const std::uint32_t stride = queue_stride(item_size);
    words.resize(cap * stride / 8);
    view.counters = counters.get();
    view.seq = seq.data();
    view.items = reinterpret_cast<std::byte*>(words.data());
    view.mask = cap - 1;
    view.stride = stride;
    view.index = index;
    view.error = error;
  }
};

struct HostWaitingStorage {
  std::vector<std::uint32_t> state, queue_of;
  std::vector<std::uint64_t> tags, words;
  std::unique_ptr<WaitingStorageCounters> counters = std::make_unique<WaitingStorageCounters>();
  WaitingStorageView view;

  HostWaitingStorage(std::uint32_t capacity, std::uint32_t item_size, ErrorWord* error)
      : state(capacity), queue_of(capacity), tags(capacity) {
    *counters = WaitingStorageCounters{};
    const std::uint32_t stride = queue_stride(item_size);
    words.resize(std::size_t(capacity) * stride / 8 + 1);
    view.state = state.data();
    view.queue_of = queue_of.data();
    view.tag_of = tags.data();
    view.items = reinterpret_cast<std::byte*>(words.data());
    view.counters = counters.get();
    view.capacity = capacity;
    view.stride = stride;
    view.error = error;
  }
};

// Catch2 assertions are not thread-safe: worker threads record failures here and the test
// checks them after joining.
struct ThreadFailures {
  std::atomic<std::uint64_t> count{0};
  std::mutex mutex;
  std::string first;
  void fail(const char* what, int line) {
    if (count.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      first = std::string(what) + " (line " + std::to_string(line) + ")";
    }
  }
};

#define APIARY_THREAD_CHECK(failures, condition)                  \
  do {                                                             \
    if (!(condition)) (failures).fail(#condition, __LINE__);       \
  } while (0)

template <class F>
void run_threads(unsigned n, F&& f) {
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n; ++t) threads.emplace_back([&f, t] { f(t); });
  for (auto& th : threads) th.join();
}

}  // namespace apiary::testing
