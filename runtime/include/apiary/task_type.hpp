// The task-type concept. A task type is a struct with
//
//   using Item = MyWorkItem;                       // trivially copyable, alignof <= 8
//   static constexpr unsigned threads = 64;        // worker size: threads per task, 1..1024
//   static constexpr unsigned shared_bytes = 0;    // shared memory one task needs
//   static constexpr const char* name = "MyTask";  // shown in reports and traces
//   template <class Ctx>
//   __device__ void operator()(apiary::Worker w, const Item& item, Ctx& ctx) const;
//
// Optional:
//
//   static constexpr bool waits_at_gates = true;   // see waits_at_gates() below
//
// check_task_type<T>() turns each missing piece into a one-line diagnostic instead of a
// page of template errors.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace apiary {

namespace detail {
template <class T>
concept HasItem = requires { typename T::Item; };
template <class T>
concept HasThreads = requires {
  { T::threads } -> std::convertible_to<unsigned>;
};
template <class T>
concept HasSharedBytes = requires {
  { T::shared_bytes } -> std::convertible_to<unsigned>;
};
template <class T>
concept HasName = requires {
  { T::name } -> std::convertible_to<const char*>;
};
}  // namespace detail

template <class T>
concept TaskType = detail::HasItem<T> && detail::HasThreads<T> && detail::HasSharedBytes<T> &&
                   detail::HasName<T> && std::is_trivially_copyable_v<typename T::Item> &&
                   (T::threads >= 1u && T::threads <= 1024u) && alignof(typename T::Item) <= 8 &&
                   std::is_default_constructible_v<T>;

// Whether T declares `waits_at_gates = true`: it holds its continuation at a gate
// (ctx.hold_next_at) that usually opens within a few microseconds, as a barrier of short tasks
// does. The megakernel's worker then waits for the gate itself and runs the continuation as a
// local hop (handoff.hpp, "gated local hops"); without it the block's loop polls the gate,
// which is as correct and slower. Opt-in, because the wait's code costs registers in every
// task type's worker it is compiled into (a fan-tree megakernel 64 -> 66: one block per SM).
template <class T>
constexpr bool waits_at_gates() {
  if constexpr (requires {
                  { T::waits_at_gates } -> std::convertible_to<bool>;
                })
    return T::waits_at_gates;
  else
    return false;
}

// Readable diagnostics for a type that should be a TaskType.
template <class T>
consteval bool check_task_type() {
  static_assert(detail::HasItem<T>, "apiary: a task type needs `using Item = <work item type>;`");
  if constexpr (detail::HasItem<T>) {
    static_assert(std::is_trivially_copyable_v<typename T::Item>,
                  "apiary: the work item (T::Item) must be trivially copyable: it is copied through device queues");
    static_assert(alignof(typename T::Item) <= 8, "apiary: the work item must have alignment <= 8");
  }
  static_assert(detail::HasThreads<T>,
                "apiary: a task type needs `static constexpr unsigned threads = N;` (worker size, 1..1024)");
  if constexpr (detail::HasThreads<T>)
    static_assert(T::threads >= 1u && T::threads <= 1024u, "apiary: worker size (T::threads) must be 1..1024");
  static_assert(detail::HasSharedBytes<T>,
                "apiary: a task type needs `static constexpr unsigned shared_bytes = N;` (0 if none)");
  static_assert(detail::HasName<T>, "apiary: a task type needs `static constexpr const char* name = \"...\";`");
  static_assert(std::is_default_constructible_v<T>, "apiary: a task type must be default constructible");
  return true;
}

}  // namespace apiary
