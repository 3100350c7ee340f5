// `apiary-synth CONFIG --plan`: loads, validates and plans a config without a GPU.
#pragma once

#include <filesystem>
#include <ostream>

namespace apiary::synthetic {

// Prints the plan to `out` and returns 0, or prints "error: <where>: <what>" to `err` and
// returns 1 (bad config, capacity too small, unreadable file).
int run_plan_command(const std::filesystem::path& config, std::ostream& out, std::ostream& err);

}  // namespace apiary::synthetic
