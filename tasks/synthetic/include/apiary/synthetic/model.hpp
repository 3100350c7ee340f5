// The host model of a synthetic tree: enumerates every task exactly as the device will (same
// rules, same identities) and reports how many there are of each type and what capacities a
// run needs. Needs no GPU.
#pragma once

#include <apiary/synthetic/spec.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace apiary::synthetic {

struct Plan {
  std::vector<std::uint64_t> tasks_per_type;  // exact
  std::vector<double> expected_per_type;      // expectation over all seeds (sanity check)
  std::uint64_t total_tasks = 0;
  std::uint64_t root_tasks = 0;
  std::uint64_t join_instances = 0;           // tasks of join types
  std::uint64_t total_flops = 0;
  // Capacities a run needs. Every task of a type may sit in its queue at once, so a queue
  // needs as many slots as its type has tasks; the largest type sets the (uniform) capacity.
  std::uint64_t queue_needed = 0;
  std::uint64_t waiting_storage_needed = 0;   // individual mode: one slot per join instance
  std::uint64_t dependencies_needed = 0;      // individual mode: one counter per join instance
  std::uint32_t max_depth = 0;                // longest chain of creations (spawn or own), in tasks
  std::uint32_t critical_path = 0;            // longest chain of creations and join waits, in tasks
};

// Enumerates the tree. Throws InputError ("<file>: roots") if the expected size exceeds max_tasks.
Plan plan(const Spec& spec);

// Throws InputError naming capacities.<key> when an explicit capacity is below what `plan` needs.
void check_capacities(const Spec& spec, const Plan& plan);

// The table `apiary-synth CONFIG --plan` prints.
std::string format_plan(const Spec& spec, const Plan& plan);

// Expected number of tasks per type (closed form over the type DAG; no enumeration).
std::vector<double> expected_tasks(const Spec& spec);

}  // namespace apiary::synthetic
