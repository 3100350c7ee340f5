#include <apiary/config.hpp>
#include <apiary/error.hpp>
#include <apiary/json_input.hpp>

#include <nlohmann/json.hpp>

#include <set>

namespace apiary {

namespace {

using nlohmann::json;

void reject_unknown_keys(const json& j, const std::set<std::string>& known, const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    if (known.count(key)) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw InputError(where, "unknown key '" + key + "'; known keys: " + list);
  }
}

template <class T>
T number(const json& j, const std::string& key, const std::string& where, T min_value, T max_value) {
  const json& v = j.at(key);
  if (!v.is_number()) throw InputError(where + ": " + key, "must be a number, got " + std::string(v.type_name()));
  const double d = v.get<double>();
  if (d < double(min_value) || d > double(max_value))
    throw InputError(where + ": " + key, "value " + v.dump() + " out of range [" + std::to_string(min_value) +
                                             ", " + std::to_string(max_value) + "]");
  if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) throw InputError(where + ": " + key, "must be an integer, got " + v.dump());
    return v.get<T>();
  } else {
    return static_cast<T>(d);
  }
}

void read_megakernel(const json& j, MegakernelConfig& mk, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "must be an object");
  reject_unknown_keys(j, {"block_threads", "blocks_per_sm"}, where);
  if (j.contains("block_threads")) {
    mk.block_threads = number<std::uint32_t>(j, "block_threads", where, 0, 1024);
    if (mk.block_threads % 32 != 0)
      throw InputError(where + ": block_threads", "must be a multiple of 32 (or 0 for automatic)");
  }
  if (j.contains("blocks_per_sm")) mk.blocks_per_sm = number<std::uint32_t>(j, "blocks_per_sm", where, 0, 64);
}

void read_device_controller(const json& j, DeviceControllerConfig& dc, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "must be an object");
  reject_unknown_keys(j, {"pending_launches", "oversubscription", "linger_us"}, where);
  if (j.contains("pending_launches"))
    dc.pending_launches = number<std::uint32_t>(j, "pending_launches", where, 1, 1u << 24);
  if (j.contains("oversubscription")) dc.oversubscription = number<double>(j, "oversubscription", where, 0.01, 64.0);
  if (j.contains("linger_us"))
    dc.linger_us = number<std::uint32_t>(j, "linger_us", where, 0, DeviceControllerConfig::max_linger_us);
}

void read_timesliced_graph(const json& j, TimeslicedGraphConfig& tg, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "must be an object");
  reject_unknown_keys(j, {"rounds_per_graph", "graphs_in_flight"}, where);
  if (j.contains("rounds_per_graph"))
    tg.rounds_per_graph =
        number<std::uint32_t>(j, "rounds_per_graph", where, 1, TimeslicedGraphConfig::max_rounds_per_graph);
  if (j.contains("graphs_in_flight"))
    tg.graphs_in_flight =
        number<std::uint32_t>(j, "graphs_in_flight", where, 1, TimeslicedGraphConfig::max_graphs_in_flight);
}

}  // namespace

void DeviceControllerConfig::check(const std::string& where) const {
  if (linger_us > max_linger_us)
    throw InputError(where + ": device_controller.linger_us",
                     "value " + std::to_string(linger_us) + " out of range [0, " + std::to_string(max_linger_us) + "]");
}

void TimeslicedGraphConfig::check(const std::string& where) const {
  auto in_range = [&](const char* key, std::uint32_t value, std::uint32_t max_value) {
    if (value >= 1 && value <= max_value) return;
    throw InputError(where + ": timesliced_graph." + key,
                     "value " + std::to_string(value) + " out of range [1, " + std::to_string(max_value) + "]");
  };
  in_range("rounds_per_graph", rounds_per_graph, max_rounds_per_graph);
  in_range("graphs_in_flight", graphs_in_flight, max_graphs_in_flight);
}

std::uint64_t Config::capacity_for(const std::string& name, std::string* key) const {
  if (auto it = queue_capacities.find(name); it != queue_capacities.end()) {
    if (key) *key = "queue_capacities." + name;
    return it->second;
  }
  if (key) *key = "queue_capacity";
  return queue_capacity;
}

Config Config::from_json(const json& j, const std::string& source) {
  if (!j.is_object()) throw InputError(source, "a runtime config must be a JSON object");
  reject_unknown_keys(j,
                      {"scheduler", "queue_capacity", "queue_capacities", "waiting_storage_capacity",
                       "dependency_capacity", "watchdog_seconds", "host_input_capacity", "trace", "trace_capacity",
                       "trace_event_capacity", "handoff", "megakernel", "device_controller", "timesliced_graph",
                       "device"},
                      source);
  Config c;
  constexpr std::uint64_t max_cap = 1ull << 40;
  if (j.contains("scheduler")) {
    if (!j["scheduler"].is_string()) throw InputError(source + ": scheduler", "must be a string");
    try {
      c.scheduler = parse_scheduler(j["scheduler"].get<std::string>());
    } catch (const InputError& e) {
      throw InputError(source + ": scheduler", e.what());
    }
  }
  if (j.contains("queue_capacity")) c.queue_capacity = number<std::uint64_t>(j, "queue_capacity", source, 1, max_cap);
  if (j.contains("queue_capacities")) {
    const auto& m = j["queue_capacities"];
    if (!m.is_object()) throw InputError(source + ": queue_capacities", "must be an object {\"TaskType\": capacity}");
    for (const auto& [name, value] : m.items())
      c.queue_capacities[name] = number<std::uint64_t>(m, name, source + ": queue_capacities", 1, max_cap);
  }
  if (j.contains("waiting_storage_capacity"))
    c.waiting_storage_capacity = number<std::uint32_t>(j, "waiting_storage_capacity", source, 0, 1u << 30);
  if (j.contains("dependency_capacity"))
    c.dependency_capacity = number<std::uint32_t>(j, "dependency_capacity", source, 0, 1u << 30);
  if (j.contains("host_input_capacity"))
    c.host_input_capacity = number<std::uint32_t>(j, "host_input_capacity", source, 1, 1u << 26);
  if (j.contains("watchdog_seconds")) c.watchdog_seconds = number<double>(j, "watchdog_seconds", source, 0.001, 86400.0);
  if (j.contains("trace")) {
    if (!j["trace"].is_boolean()) throw InputError(source + ": trace", "must be true or false");
    c.trace = j["trace"].get<bool>();
  }
  if (j.contains("handoff")) {
    if (!j["handoff"].is_boolean()) throw InputError(source + ": handoff", "must be true or false");
    c.handoff = j["handoff"].get<bool>();
  }
  if (j.contains("trace_capacity")) c.trace_capacity = number<std::uint64_t>(j, "trace_capacity", source, 1, max_cap);
  if (j.contains("trace_event_capacity"))
    c.trace_event_capacity = number<std::uint64_t>(j, "trace_event_capacity", source, 1, max_cap);
  if (j.contains("megakernel")) read_megakernel(j["megakernel"], c.megakernel, source + ": megakernel");
  if (j.contains("device_controller"))
    read_device_controller(j["device_controller"], c.device_controller, source + ": device_controller");
  if (j.contains("timesliced_graph"))
    read_timesliced_graph(j["timesliced_graph"], c.timesliced_graph, source + ": timesliced_graph");
  if (j.contains("device")) c.device = number<int>(j, "device", source, 0, 64);
  return c;
}

Config Config::parse(std::string_view text, const std::string& source) {
  return from_json(parse_json(text, source), source);
}

Config Config::load(const std::filesystem::path& file) { return from_json(load_json_file(file), file.string()); }

}  // namespace apiary
