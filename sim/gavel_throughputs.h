#pragma once
// Gavel's measured throughputs (steps/s of a whole job) per (job type, scale factor) on V100, P100 and
// K80, with the job's GPUs on one server (consolidated) or spread over servers (unconsolidated). Read
// from the flat table derived from Gavel's simulation_throughputs.json:
//   job_type,model,batch_size,scale_factor,{v100,p100,k80}_steps_per_s,{v100,p100,k80}_unconsolidated_steps_per_s
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace themis::sim {

enum class GavelGpu { kV100 = 0, kP100 = 1, kK80 = 2 };
std::string_view to_string(GavelGpu gpu);
// "v100", "p100" or "k80"; anything else throws std::invalid_argument.
GavelGpu parse_gavel_gpu(std::string_view name);

// 0 where Gavel measured nothing (an empty cell or 0.0 in the table).
struct GavelThroughput {
  double consolidated[3] = {0, 0, 0};    // steps/s by GavelGpu
  double unconsolidated[3] = {0, 0, 0};  // steps/s by GavelGpu
};

class GavelThroughputs {
 public:
  // Bad rows raise TraceError "file:line: field: reason".
  static GavelThroughputs parse(std::string_view text, std::string_view source_name);
  static GavelThroughputs load(const std::filesystem::path& path);

  // nullptr when the table has no row for this job type at this scale factor.
  const GavelThroughput* find(const std::string& job_type, int scale_factor) const;
  bool knows_job_type(const std::string& job_type) const;
  std::size_t size() const { return rows_.size(); }

 private:
  std::map<std::pair<std::string, int>, GavelThroughput> rows_;
};

// $THEMIS_GAVEL_THROUGHPUTS_CSV, else the shared traces folder's derived table.
std::filesystem::path default_gavel_throughputs_csv();

}  // namespace themis::sim
