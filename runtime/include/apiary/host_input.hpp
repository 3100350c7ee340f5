// Host task injection while a graph runs. Host threads call Runtime::submit<T>(item); items
// go through a lock-free MPMC queue (Boost.Lockfree) to the thread supervising the run, which
// copies them into a mailbox ring in mapped (zero-copy) host memory. On the device one thread
// (megakernel: thread 0 of block 0; timesliced: the control kernel) drains the mailbox into
// the task queues. While host input is open the run does not end; close_host_input() says "no
// more host input", and the device clears RunState::host_open once it took every item.
#pragma once

#include <apiary/platform.hpp>

#include <cstdint>

namespace apiary {

inline constexpr std::uint32_t max_injected_item_bytes = 64;

struct HostTask {
  std::uint32_t queue;
  std::uint32_t bytes;
  std::uint64_t words[max_injected_item_bytes / 8];
};

// Lives in mapped pinned memory: written by the host, read by the device (system scope).
struct HostMailbox {
  alignas(64) std::uint64_t posted;  // items written by the host (release)
  alignas(64) std::uint64_t closed;  // 1: the host will post nothing more (release)
  alignas(64) std::uint64_t taken;   // items the device enqueued (release; the host's back-pressure)
  std::uint32_t capacity;            // slots in the ring
  HostTask slots[1];                 // capacity entries (allocated past the struct)
};

template <class T>
using SystemAtomic = cuda::atomic_ref<T, cuda::thread_scope_system>;

}  // namespace apiary
