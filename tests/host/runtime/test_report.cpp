// Report::format for runs that did not finish: where each queue's tickets and blocks were left.
#include <apiary/report.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace apiary;

TEST_CASE("report: a run that did not finish says where each queue's tickets and blocks were left", "[report]") {
  Report r;
  r.status = RunStatus::aborted;
  QueueReport stuck;
  stuck.name = "Leaf";
  stuck.queued = 2806;
  stuck.claimable = 2790;
  stuck.draining_blocks = 3;
  QueueReport empty;
  empty.name = "Fork";
  r.queues = {stuck, empty};
  const std::string text = r.format();
  REQUIRE_THAT(text, Catch::Contains("Leaf at the end: 2806 reserved and not claimed, 2790 of them claimable, "
                                     "3 worker block(s) draining it"));
  REQUIRE_THAT(text, !Catch::Contains("Fork at the end"));  // nothing left there
  r.status = RunStatus::finished;  // a clean run lists no such lines
  REQUIRE_THAT(r.format(), !Catch::Contains("at the end:"));
}
