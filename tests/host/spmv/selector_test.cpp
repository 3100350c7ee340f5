// The schedule selector's rules (apps/spmv/src/spmv_plan.cu, docs/spmv.md "The selector
// heuristic"), one case per rule.
#include "spmv.hpp"

#include <apiary/error.hpp>

#include <catch2/catch.hpp>

#include <string>

using apiary::balance::ScheduleKind;
using apiary::spmv::select_schedule;
using apiary::spmv::selection_reason;

namespace {
apiary::sparse::RowStats shape(std::int64_t rows, double mean, double stddev, std::int64_t max) {
  apiary::sparse::RowStats s;
  s.rows = rows;
  s.cols = rows;
  s.mean = mean;
  s.stddev = stddev;
  s.max = max;
  s.min = 0;
  s.nnz = static_cast<std::int64_t>(mean * static_cast<double>(rows));
  return s;
}
}  // namespace

TEST_CASE("selector: the shape rules", "[spmv][selector]") {
  CHECK(select_schedule(shape(1'000'000, 5, 0.1, 6)) == ScheduleKind::thread_mapped);
  CHECK(select_schedule(shape(100'000, 12, 1, 20)) == ScheduleKind::virtual_warp);
  CHECK(select_schedule(shape(100'000, 50, 5, 70)) == ScheduleKind::warp_mapped);
  CHECK(select_schedule(shape(1'000'000, 5, 6, 800)) == ScheduleKind::multi_phase);  // skewed
  CHECK(select_schedule(shape(5'000, 5, 6, 800)) == ScheduleKind::warp_mapped);      // skewed, small
}

TEST_CASE("selector: from 1e7 non-zeros, medium even rows go to multi-phase unless banded", "[spmv][selector]") {
  const auto even_large = shape(5'000'000, 16, 0.5, 16);        // 8e7 non-zeros (regular16_5m-like)
  const auto even_medium = shape(500'000, 12, 0.5, 12);         // 6e6: below the bound
  const auto skewed_large = shape(3'800'000, 4.8, 5.4, 770);    // cit_patents-like
  const auto huge_row = shape(5'500'000, 9.6, 620, 1'150'000);  // circuit5M-like: max/mean 120,000
  CHECK(select_schedule(even_large) == ScheduleKind::multi_phase);
  CHECK(select_schedule(even_medium) == ScheduleKind::virtual_warp);
  CHECK(select_schedule(skewed_large) == ScheduleKind::multi_phase);
  CHECK(select_schedule(huge_row) == ScheduleKind::multi_phase);
  auto banded_large = even_large;
  banded_large.column_spread = 0.01;  // lap3d_27pt_160-like: x read with locality
  CHECK(select_schedule(banded_large) == ScheduleKind::virtual_warp);
  CHECK_THAT(selection_reason(banded_large), Catch::Contains("banded"));
  CHECK_THAT(selection_reason(even_large), Catch::Contains("nnz >= 1e7"));
  CHECK_THAT(selection_reason(even_medium), Catch::Contains("nnz < 1e7"));
}

TEST_CASE("selector: scattered columns lean to more lanes per row", "[spmv][selector]") {
  auto banded = [](apiary::sparse::RowStats s) {
    s.column_spread = 0.05;
    return s;
  };
  const auto medium = shape(20'000, 27, 3.6, 43);            // A5-like: 5.4e5 non-zeros, scattered
  const auto short_large = shape(3'375'000, 7, 0.2, 7);      // lap3d_7pt_150_perm-like: 2.3e7
  CHECK(select_schedule(medium) == ScheduleKind::warp_mapped);
  CHECK_THAT(selection_reason(medium), Catch::Contains("scattered"));
  CHECK(select_schedule(banded(medium)) == ScheduleKind::virtual_warp);  // lap3d_27pt_40-like
  CHECK(select_schedule(shape(20'000, 15, 2.6, 28)) == ScheduleKind::virtual_warp);  // mean < 16
  CHECK(select_schedule(short_large) == ScheduleKind::virtual_warp);
  CHECK_THAT(selection_reason(short_large), Catch::Contains("short rows (mean < 8), nnz >= 1e7, scattered"));
  CHECK(select_schedule(banded(short_large)) == ScheduleKind::thread_mapped);  // lap2d_5pt_3000-like
  CHECK(select_schedule(shape(300'000, 7, 0.2, 7)) == ScheduleKind::thread_mapped);  // below 1e7
}

TEST_CASE("multi-phase takes one window of 11 items per thread on large banded matrices, when asked",
          "[spmv][selector]") {
  using apiary::spmv::multi_phase_window;
  using apiary::spmv::Tuning;
  auto banded = [](apiary::sparse::RowStats s) {
    s.column_spread = 0.01;
    return s;
  };
  const auto large = shape(2'000'000, 28, 170, 190'000);  // longrows_2m-like: 5.6e7 non-zeros
  const auto medium = shape(300'000, 28, 5, 60);           // 8.4e6: below the bound
  Tuning fit;
  fit.fit_window = true;
  const Tuning given;  // fit_window off: the knobs as given
  CHECK(multi_phase_window(banded(large), fit).items_per_thread == 11);
  CHECK(multi_phase_window(banded(large), fit).iterations == 1);
  CHECK(multi_phase_window(large, fit).items_per_thread == fit.items_per_thread);  // column spread 1: scattered
  CHECK(multi_phase_window(banded(medium), fit).items_per_thread == fit.items_per_thread);
  CHECK(multi_phase_window(banded(large), given).items_per_thread == given.items_per_thread);
  CHECK(multi_phase_window(banded(large), given).iterations == given.iterations);
}

TEST_CASE("multi-phase stores split rows itself on small matrices of short non-empty rows", "[spmv][selector]") {
  using apiary::spmv::split_row_store_limit;
  using apiary::spmv::stores_split_rows;
  using apiary::spmv::Tuning;
  auto rows_up_to = [](std::int64_t max, std::int64_t nnz, std::int64_t empty) {
    apiary::sparse::RowStats s = shape(nnz / 8, 8, 1, max);
    s.nnz = nnz;
    s.empty_rows = empty;
    return s;
  };
  const Tuning tuning;
  CHECK(tuning.split_row_store_max == split_row_store_limit);
  CHECK(stores_split_rows(rows_up_to(64, 1'000'000, 0), tuning));
  CHECK_FALSE(stores_split_rows(rows_up_to(65, 1'000'000, 0), tuning));     // a row too long
  CHECK_FALSE(stores_split_rows(rows_up_to(8, 1'000'000, 1), tuning));      // an empty row: nobody would write it
  CHECK(stores_split_rows(rows_up_to(8, 4'999'999, 0), tuning));
  CHECK_FALSE(stores_split_rows(rows_up_to(8, 5'000'000, 0), tuning));      // large: the clear and atomics
  Tuning off;
  off.split_row_store_max = 0;
  CHECK_FALSE(stores_split_rows(rows_up_to(8, 1'000'000, 0), off));
  Tuning shorter;
  shorter.split_row_store_max = 16;
  CHECK_FALSE(stores_split_rows(rows_up_to(17, 1'000'000, 0), shorter));
  CHECK(stores_split_rows(rows_up_to(16, 1'000'000, 0), shorter));
  Tuning beyond;
  beyond.split_row_store_max = split_row_store_limit + 1;
  try {
    stores_split_rows(rows_up_to(8, 1'000'000, 0), beyond);
    FAIL("a split_row_store_max above the limit was accepted");
  } catch (const apiary::InputError& e) {
    CHECK(std::string(e.what()).find("split_row_store_max") != std::string::npos);
    CHECK(std::string(e.what()).find("64") != std::string::npos);
  }
}
