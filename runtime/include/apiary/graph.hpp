// The C++ front end of the phase table (thesis Listing 4.1):
//
//   using Graph = apiary::PhaseQueue<apiary::Phaseless<Logger>,
//                                    apiary::Phase<CreateLeg, CreateTabletop>,
//                                    apiary::Phase<AssembleTable>>;
//
// CyclicPhaseQueue<...> runs the phases again from the first after the last, until nothing
// is pending. DataGraph<Code> is the data-driven front end: the phase table comes from data
// (JSON) and every queue runs the same compiled task type with its own worker size.
#pragma once

#include <apiary/phase_table.hpp>
#include <apiary/task_type.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace apiary {

template <class... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class... Ts>
struct Phase {
  static_assert((check_task_type<Ts>() && ...));
};
template <class... Ts>
struct Phaseless {
  static_assert((check_task_type<Ts>() && ...));
};

template <class... Phases>
struct PhaseQueue {
  static constexpr bool cyclic = false;
};
template <class... Phases>
struct CyclicPhaseQueue {
  static constexpr bool cyclic = true;
};

template <class Code>
struct DataGraph {
  static_assert(check_task_type<Code>());
};

namespace detail {

template <class A, class B>
struct Concat;
template <class... A, class... B>
struct Concat<TypeList<A...>, TypeList<B...>> {
  using type = TypeList<A..., B...>;
};

template <class P>
struct PhaseTypes;
template <class... Ts>
struct PhaseTypes<Phase<Ts...>> {
  using types = TypeList<Ts...>;
  static constexpr bool phaseless = false;
};
template <class... Ts>
struct PhaseTypes<Phaseless<Ts...>> {
  using types = TypeList<Ts...>;
  static constexpr bool phaseless = true;
};

template <class... Ps>
struct Flatten;
template <>
struct Flatten<> {
  using type = TypeList<>;
};
template <class P, class... Ps>
struct Flatten<P, Ps...> {
  using type = typename Concat<typename PhaseTypes<P>::types, typename Flatten<Ps...>::type>::type;
};

template <class T, class List>
struct IndexOf;
template <class T, class... Ts>
struct IndexOf<T, TypeList<Ts...>> {
  static constexpr std::uint32_t value = [] {
    constexpr bool same[] = {std::is_same_v<T, Ts>..., false};
    for (std::uint32_t i = 0; i < sizeof...(Ts); ++i)
      if (same[i]) return i;
    return ~0u;
  }();
};

template <class T>
void add_layouts(std::vector<QueueLayout>& out, std::int32_t phase) {
  QueueLayout q;
  q.name = T::name;
  q.item_size = sizeof(typename T::Item);
  q.worker_size = T::threads;
  q.shared_bytes = T::shared_bytes;
  q.phase = phase;
  q.code = static_cast<std::uint32_t>(out.size());
  out.push_back(q);
}

template <class P>
void add_phase(std::vector<QueueLayout>& out, std::int32_t& next_phase) {
  const std::int32_t phase = PhaseTypes<P>::phaseless ? no_phase : next_phase++;
  [&]<class... Ts>(TypeList<Ts...>) { (add_layouts<Ts>(out, phase), ...); }(typename PhaseTypes<P>::types{});
}

template <class First, class... Rest>
consteval bool phaseless_only_first_impl() {
  return (!PhaseTypes<Rest>::phaseless && ...);
}
template <class... Ps>
consteval bool phaseless_only_first() {
  if constexpr (sizeof...(Ps) == 0) return true;
  else return phaseless_only_first_impl<Ps...>();
}

}  // namespace detail

namespace detail {
template <class T, class P>
struct InPhaseless : std::false_type {};
template <class T, class... Ts>
struct InPhaseless<T, Phaseless<Ts...>> : std::bool_constant<(std::is_same_v<T, Ts> || ...)> {};
}  // namespace detail

// What the runtime needs from a graph type: the compiled task types (Codes) and, for
// declared graphs, their layout.
template <class Graph>
struct GraphTraits;

template <template <class...> class Queue, class... Phases>
  requires std::is_same_v<Queue<Phases...>, PhaseQueue<Phases...>> ||
           std::is_same_v<Queue<Phases...>, CyclicPhaseQueue<Phases...>>
struct GraphTraits<Queue<Phases...>> {
  static_assert(detail::phaseless_only_first<Phases...>(),
                "apiary: Phaseless<...> may only be the first argument of a PhaseQueue (as in the thesis)");
  using Codes = typename detail::Flatten<Phases...>::type;
  static constexpr bool declared = true;
  static constexpr bool cyclic = Queue<Phases...>::cyclic;

  template <class T>
  static constexpr std::uint32_t queue_of = detail::IndexOf<T, Codes>::value;

  // Whether T is one of the graph's phaseless types: only those may wait in a block's hand-off
  // slot for a dependency or a gate (handoff.hpp).
  template <class T>
  static constexpr bool phaseless_type = (detail::InPhaseless<T, Phases>::value || ...);

  // Layouts in declaration order (phaseless groups get no phase index). Capacities are filled
  // in by the runtime from its Config.
  static std::vector<QueueLayout> layouts() {
    std::vector<QueueLayout> out;
    std::int32_t next_phase = 0;
    (detail::add_phase<Phases>(out, next_phase), ...);
    return out;
  }
};

template <class Code>
struct GraphTraits<DataGraph<Code>> {
  using Codes = TypeList<Code>;
  static constexpr bool declared = false;
  static constexpr bool cyclic = false;
  template <class T>
  static constexpr bool phaseless_type = true;  // phases come from the data at run time
};

}  // namespace apiary
