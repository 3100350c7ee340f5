// A synthetic task tree as configured in JSON (docs/synthetic.md): validated, names resolved to
// indices. Everything that can be wrong with a config is reported here, as apiary::InputError
// with "file:line:col" (JSON syntax) or "file: key path" (meaning), before any GPU work.
#pragma once

#include <apiary/synthetic/type_dag.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apiary::synthetic {

enum class DependencyMode { phases, individual };

inline constexpr std::uint32_t max_worker_size = 1024;
inline constexpr std::uint32_t max_shared_bytes = 48 * 1024;   // static shared memory per block
inline constexpr std::uint32_t max_transition_count = 1u << 20;
inline constexpr std::uint64_t max_tasks = 1'000'000'000;      // the host model must enumerate them

struct TaskTypeSpec {
  std::string name;
  std::uint32_t worker_size = 0;   // threads per task, 1..1024
  std::uint32_t shared_bytes = 0;  // shared memory per task, <= 48 KiB
  std::uint32_t flops = 0;         // floating-point operations per task (all its threads together)
  std::int32_t phase = -1;         // phases mode: >= 0; individual mode: -1 (a given phase is ignored)
};

struct TransitionSpec {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  double probability = 1.0;
  std::uint32_t count = 1;
};

struct RootSpec {
  std::uint32_t type = 0;
  std::uint64_t count = 0;
};

// Capacities of the device structures; nullopt = "auto" (sized from the host model).
struct CapacitySpec {
  std::optional<std::uint64_t> queue;            // per task-type queue, in items
  std::optional<std::uint64_t> waiting_storage;  // parked tasks
  std::optional<std::uint64_t> dependencies;     // dependency counters
};

struct Spec {
  std::string source;  // file name (or label) used in error messages
  std::string name;
  std::uint64_t seed = 0;
  DependencyMode mode = DependencyMode::phases;
  std::vector<TaskTypeSpec> types;
  std::vector<TransitionSpec> transitions;  // config order; the index is the RNG key
  std::vector<RootSpec> roots;              // config order; the index is the root entry
  CapacitySpec capacities;
  std::string scheduler;                    // default scheduler of the CLI; "" = none given
  TypeDag dag;                              // joins, owners, scopes (validated)

  std::uint32_t num_phases() const;         // phases mode: max phase + 1; individual: 0
  std::optional<std::uint32_t> find_type(std::string_view name) const;
};

// Parses and validates a config. Throws apiary::InputError.
Spec parse_spec(std::string_view json_text, std::string source_name);
Spec load_spec(const std::filesystem::path& file);

const char* to_string(DependencyMode mode);

}  // namespace apiary::synthetic
