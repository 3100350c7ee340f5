// The Busato-Bombieri benchmark (seed 001, section 5): every work unit (atom) of a CSR
// workload is visited and updated once: out[unit] = its work item (tile). Launch geometry
// and partition come from an SpmvPlan of the same matrix (same schedules, same parameters).
#pragma once

#include "spmv.hpp"

namespace apiary::spmv {

// out[a] = tile of atom a for every atom; when `visits` is not null, also visits[a] += 1
// (atomically), so a test can prove every unit was updated exactly once.
void launch_visit(ScheduleKind kind, const LaunchConfig& config, const index_t* row_offsets, index_t rows, index_t* out,
                  unsigned* visits, cudaStream_t stream);

}  // namespace apiary::spmv
