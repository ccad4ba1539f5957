#include "nodelet/job_log.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace themis::nodelet {

std::string job_log_path(const std::string& work_dir, std::int64_t app, std::int64_t job, std::uint32_t attempt,
                         std::uint32_t rank) {
  return (std::filesystem::path(work_dir) / "jobs" / std::to_string(app) / std::to_string(job) /
          ("attempt-" + std::to_string(attempt)) / ("rank-" + std::to_string(rank) + ".log"))
      .string();
}

LogSlice read_job_log(const std::string& work_dir, std::int64_t app, std::int64_t job, std::uint32_t attempt,
                      std::uint32_t rank, std::uint64_t offset, std::uint32_t max_bytes) {
  LogSlice slice;
  std::ifstream in(job_log_path(work_dir, app, job, attempt, rank), std::ios::binary);
  if (!in) {
    slice.missing = true;
    return slice;
  }
  in.seekg(0, std::ios::end);
  slice.size = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in.tellg()));
  slice.offset = std::min(offset, slice.size);
  const std::uint64_t want = std::min<std::uint64_t>({std::min(max_bytes, kMaxLogChunkBytes), slice.size - slice.offset});
  slice.data.resize(static_cast<std::size_t>(want));
  in.seekg(static_cast<std::streamoff>(slice.offset));
  in.read(slice.data.data(), static_cast<std::streamsize>(want));
  slice.data.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return slice;
}

}  // namespace themis::nodelet
