// Every class of config error, with the exact place it is reported at and a hint how to fix it.
#include <apiary/error.hpp>
#include <apiary/synthetic/model.hpp>
#include <apiary/synthetic/spec.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

using namespace apiary::synthetic;
using nlohmann::json;

namespace {

// T0 spawns T1 (x2) and T2 (x3); T3 joins T1 and T2 and is owned by T0.
json base_config() {
  return json::parse(R"({
    "name": "t", "seed": 1, "dependency_mode": "phases",
    "task_types": [
      {"name": "T0", "worker_size": 32, "flops": 100, "phase": 0},
      {"name": "T1", "worker_size": 64, "flops": 100, "phase": 1},
      {"name": "T2", "worker_size": 32, "flops": 100, "phase": 1},
      {"name": "T3", "worker_size": 32, "flops": 100, "phase": 2}],
    "transitions": [
      {"from": "T0", "to": "T1", "probability": 1.0, "count": 2},
      {"from": "T0", "to": "T2", "probability": 1.0, "count": 3},
      {"from": "T1", "to": "T3"},
      {"from": "T2", "to": "T3"}],
    "roots": [{"type": "T0", "count": 4}]
  })");
}

// Parses `text` as "x.json" and checks that it fails at `where` with `what` in the message.
void require_text_error(const std::string& text, const std::string& where, const std::string& what) {
  try {
    const Spec spec = parse_spec(text, "x.json");
    check_capacities(spec, plan(spec));
    FAIL("no error; expected " << where << ": ..." << what);
  } catch (const apiary::InputError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.rfind(where + ": ", 0) == 0);
    CHECK(message.find(what) != std::string::npos);
  }
}

void require_error(const json& config, const std::string& where, const std::string& what) {
  require_text_error(config.dump(2), where, what);
}

}  // namespace

TEST_CASE("the base config is valid", "[synthetic][spec]") {
  const Spec spec = parse_spec(base_config().dump(), "x.json");
  CHECK(spec.types.size() == 4);
  CHECK(spec.num_phases() == 3);
  CHECK(spec.dag.joins == std::vector<std::uint32_t>{3});
}

TEST_CASE("JSON syntax errors give file:line:column", "[synthetic][spec]") {
  require_text_error("{\n  \"seed\": 1,\n  \"name\": x\n}", "x.json:3:11", "JSON syntax error");
  require_text_error("{\n  \"seed\": 1,\n}", "x.json:3:1", "JSON syntax error");
  require_text_error("{\"seed\": 1", "x.json:1:11", "JSON syntax error");
  require_text_error("", "x.json:1:1", "JSON syntax error");
  require_text_error("{\n  \"seed\": 1e999\n}", "x.json:2:15", "JSON number out of range");
  // Comments are allowed, so configs can explain themselves.
  json c = base_config();
  CHECK_NOTHROW(parse_spec("// a comment\n" + c.dump(2), "x.json"));
}

TEST_CASE("unknown keys are rejected with their key path", "[synthetic][spec]") {
  json c = base_config();
  c["sed"] = 3;
  require_error(c, "x.json: sed", "unknown key \"sed\"");
  c = base_config();
  c["task_types"][1]["worker_sise"] = 3;
  require_error(c, "x.json: task_types[1].worker_sise", "allowed keys here: name, worker_size");
  c = base_config();
  c["transitions"][0]["prob"] = 0.5;
  require_error(c, "x.json: transitions[0].prob", "unknown key");
  c = base_config();
  c["capacities"] = {{"queues", 10}};
  require_error(c, "x.json: capacities.queues", "unknown key");
}

TEST_CASE("missing keys and wrong types", "[synthetic][spec]") {
  json c = base_config();
  c.erase("dependency_mode");
  require_error(c, "x.json: dependency_mode", "missing required key");
  c = base_config();
  c["dependency_mode"] = "phase";
  require_error(c, "x.json: dependency_mode", "use \"phases\" or \"individual\"");
  c = base_config();
  c["task_types"][2].erase("phase");
  require_error(c, "x.json: task_types[2].phase", "needs a phase index");
  c = base_config();
  c["roots"] = json::array();
  require_error(c, "x.json: roots", "at least one entry");
  c = base_config();
  c["task_types"] = json::object();
  require_error(c, "x.json: task_types", "must be a JSON array");
  c = base_config();
  c["seed"] = -1;
  require_error(c, "x.json: seed", "non-negative integer");
  c = base_config();
  c["scheduler"] = "fastest";
  require_error(c, "x.json: scheduler", "megakernel (mk)");
}

TEST_CASE("unknown and duplicate names", "[synthetic][spec]") {
  json c = base_config();
  c["transitions"][2]["to"] = "T9";
  require_error(c, "x.json: transitions[2].to", "unknown task type \"T9\"; declared in task_types: T0, T1, T2, T3");
  c = base_config();
  c["roots"][0]["type"] = "t0";
  require_error(c, "x.json: roots[0].type", "unknown task type \"t0\"");
  c = base_config();
  c["task_types"][2]["name"] = "T1";
  require_error(c, "x.json: task_types[2].name", "duplicate task type name \"T1\"");
  c = base_config();
  c["transitions"].push_back({{"from", "T0"}, {"to", "T1"}});
  require_error(c, "x.json: transitions[4]", "duplicate transition T0 -> T1 (also transitions[0])");
}

TEST_CASE("numeric ranges", "[synthetic][spec]") {
  for (double p : {1.5, -0.1}) {
    json c = base_config();
    c["transitions"][0]["probability"] = p;
    require_error(c, "x.json: transitions[0].probability", "outside [0, 1]");
  }
  for (json ws : {json(0), json(1025), json(32.5), json("32")}) {
    json c = base_config();
    c["task_types"][0]["worker_size"] = ws;
    require_error(c, "x.json: task_types[0].worker_size", "must be an integer in [1, 1024]");
  }
  json c = base_config();
  c["task_types"][0]["worker_size"] = 1024;
  CHECK_NOTHROW(parse_spec(c.dump(), "x.json"));
  c["task_types"][0]["shared_bytes"] = 48 * 1024 + 1;
  require_error(c, "x.json: task_types[0].shared_bytes", "at most 48 KiB");
  c = base_config();
  c["task_types"][0]["flops"] = 4294967296ull;
  require_error(c, "x.json: task_types[0].flops", "below 2^32");
  c["task_types"][0]["flops"] = -1;
  require_error(c, "x.json: task_types[0].flops", "[0, 4294967295]");
  c = base_config();
  c["transitions"][0]["count"] = 0;
  require_error(c, "x.json: transitions[0].count", "must be an integer in [1, ");
  c = base_config();
  c["capacities"] = {{"queue", 0}};
  require_error(c, "x.json: capacities.queue", "\"auto\" or a positive integer");
}

TEST_CASE("cycles are reported with the edges that form them", "[synthetic][spec]") {
  json c = base_config();
  c["dependency_mode"] = "individual";
  c["transitions"].push_back({{"from", "T3"}, {"to", "T0"}});
  require_error(c, "x.json: transitions[0]", "cycle T0 -> T1 -> T3 -> T0 (transitions[0], transitions[2], transitions[4])");
  c = base_config();
  c["transitions"].push_back({{"from", "T2"}, {"to", "T2"}});
  require_error(c, "x.json: transitions[4]", "cycle T2 -> T2");
}

TEST_CASE("unreachable types are an error", "[synthetic][spec]") {
  json c = base_config();
  c["task_types"].push_back({{"name", "Lonely"}, {"worker_size", 32}, {"phase", 0}});
  require_error(c, "x.json: task_types[4]", "\"Lonely\" is never created");
}

TEST_CASE("join rules", "[synthetic][spec]") {
  json c = base_config();
  c["transitions"][2]["probability"] = 0.5;
  require_error(c, "x.json: transitions[2].probability", "\"T3\" is a join (it has 2 incoming transitions)");
  c = base_config();
  c["transitions"][3]["count"] = 2;
  require_error(c, "x.json: transitions[3].count", "need count 1");
  c = base_config();
  c["roots"].push_back({{"type", "T3"}, {"count", 1}});
  require_error(c, "x.json: roots[1].type", "is a join and cannot be a root");
  c = base_config();
  // Two root types lead to T3: no single type lies on every path to it.
  c["roots"].push_back({{"type", "T2"}, {"count", 1}});
  require_error(c, "x.json: task_types[3]", "join \"T3\" has no owner");
}

TEST_CASE("at most 32 joins and 4 scopes per type", "[synthetic][spec]") {
  json c = {{"dependency_mode", "individual"}, {"roots", {{{"type", "O"}, {"count", 1}}}}};
  c["task_types"].push_back({{"name", "O"}, {"worker_size", 1}});
  for (int i = 0; i < 33; ++i) {
    const std::string p = std::string("P").append(std::to_string(i)), j = std::string("J").append(std::to_string(i));
    c["task_types"].push_back({{"name", p}, {"worker_size", 1}});
    c["task_types"].push_back({{"name", j}, {"worker_size", 1}});
    c["transitions"].push_back({{"from", "O"}, {"to", p}});
    c["transitions"].push_back({{"from", "O"}, {"to", j}});
    c["transitions"].push_back({{"from", p}, {"to", j}});
  }
  require_error(c, "x.json: transitions", "33 task types are joins");

  // X is a parent of five joins owned by O: it would hold five scopes.
  json d = {{"dependency_mode", "individual"}, {"roots", {{{"type", "O"}, {"count", 1}}}}};
  d["task_types"] = {{{"name", "O"}, {"worker_size", 1}}, {{"name", "X"}, {"worker_size", 1}}};
  d["transitions"] = {{{"from", "O"}, {"to", "X"}}};
  for (int i = 0; i < 5; ++i) {
    const std::string j = std::string("J").append(std::to_string(i));
    d["task_types"].push_back({{"name", j}, {"worker_size", 1}});
    d["transitions"].push_back({{"from", "O"}, {"to", j}});
    d["transitions"].push_back({{"from", "X"}, {"to", j}});
  }
  require_error(d, "x.json: task_types[1]", "scope of 5 joins");
  d["task_types"].erase(6);
  d["transitions"].erase(d["transitions"].size() - 1);
  d["transitions"].erase(d["transitions"].size() - 1);
  CHECK_NOTHROW(parse_spec(d.dump(), "x.json"));
}

TEST_CASE("phase rules", "[synthetic][spec]") {
  json c = base_config();
  c["task_types"][1]["phase"] = 0;
  c["task_types"][0]["phase"] = 1;
  c["task_types"][2]["phase"] = 1;
  require_error(c, "x.json: transitions[0]", "T1 (phase 0) is spawned by T0 (phase 1)");
  c = base_config();
  c["task_types"][3]["phase"] = 1;
  require_error(c, "x.json: transitions[2]", "set the phase of T3 to at least 2");
  c = base_config();
  c["task_types"][3]["phase"] = 3;
  require_error(c, "x.json: task_types", "no task type is in phase 2");
  // Same phase for parent and spawned child is fine.
  c = base_config();
  c["task_types"][1]["phase"] = 0;
  c["task_types"][2]["phase"] = 0;
  c["task_types"][3]["phase"] = 1;
  CHECK_NOTHROW(parse_spec(c.dump(), "x.json"));
  // Individual mode ignores phases, even inconsistent ones.
  c["task_types"][3]["phase"] = 0;
  c["dependency_mode"] = "individual";
  const Spec spec = parse_spec(c.dump(), "x.json");
  CHECK(spec.types[3].phase == -1);
  CHECK(spec.num_phases() == 0);
}

TEST_CASE("capacities below the model's needs", "[synthetic][spec]") {
  json c = base_config();  // 4 T0, 8 T1, 12 T2, 4 T3
  c["capacities"] = {{"queue", 11}};
  require_error(c, "x.json: capacities.queue", "is 11 but the tree needs 12 (task type T2 has that many tasks");
  c["capacities"] = {{"queue", 12}, {"waiting_storage", 1}, {"dependencies", "auto"}};
  CHECK_NOTHROW(check_capacities(parse_spec(c.dump(), "x.json"), plan(parse_spec(c.dump(), "x.json"))));
  c["dependency_mode"] = "individual";
  require_error(c, "x.json: capacities.waiting_storage", "is 1 but the tree needs 4");
  c["capacities"] = {{"dependencies", 3}};
  require_error(c, "x.json: capacities.dependencies", "is 3 but the tree needs 4");
}

TEST_CASE("trees too large to enumerate", "[synthetic][spec]") {
  json c = base_config();
  c["roots"][0]["count"] = 1000000000;
  require_error(c, "x.json: roots", "at most 1000000000 are supported");
}

TEST_CASE("load_spec reports unreadable files", "[synthetic][spec]") {
  try {
    load_spec("/nonexistent/dir/x.json");
    FAIL("no error");
  } catch (const apiary::InputError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/dir/x.json: cannot open the config file (check the path)");
  }
}
