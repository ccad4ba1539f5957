#pragma once
// Output of `themis-sim run --fidelity gavel`: a summary (average JCT over the completed jobs,
// makespan, rounds) and one row per job (index in arrival order, arrival, GPUs, status, JCT), so that
// the rows can be joined with Gavel's per-job output by job index.
#include <string>

#include "sim/gavel_fidelity.h"

namespace themis::sim {

// Mean JCT of the completed jobs; 0 when none completed.
Seconds gavel_average_jct(const GavelFidelityResult& result);
std::string gavel_fidelity_table(const GavelFidelityResult& result, const GavelFidelitySettings& settings);
std::string gavel_fidelity_json(const GavelFidelityResult& result, const GavelFidelitySettings& settings);

}  // namespace themis::sim
