#pragma once
// One rank's log as themisctl logs reads it: a byte range of work_dir/jobs/<app>/<job>/attempt-<n>/rank-<r>.log
// (the rank's stdout and stderr, as the nodelet writes them).
#include <cstdint>
#include <string>

namespace themis::nodelet {

inline constexpr std::uint32_t kMaxLogChunkBytes = 65536;

struct LogSlice {
  std::string data;          // at most min(max_bytes, kMaxLogChunkBytes) bytes from `offset`
  std::uint64_t offset = 0;
  std::uint64_t size = 0;    // the file's size when read
  bool missing = false;      // no such log on this host
};

std::string job_log_path(const std::string& work_dir, std::int64_t app, std::int64_t job, std::uint32_t attempt,
                         std::uint32_t rank);
LogSlice read_job_log(const std::string& work_dir, std::int64_t app, std::int64_t job, std::uint32_t attempt,
                      std::uint32_t rank, std::uint64_t offset, std::uint32_t max_bytes);

}  // namespace themis::nodelet
