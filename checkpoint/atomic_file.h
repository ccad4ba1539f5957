#pragma once
// Atomic replacement of a file: write a temporary in the same directory, fsync it, rename it over the
// final name, fsync the directory. A reader (or a crash at any instant) sees the old file or the whole
// new one, never a prefix. A writer killed midway leaves only a temporary named ".<name>.tmp-<pid>-<n>".
#include <filesystem>
#include <functional>
#include <string_view>

namespace themis::checkpoint {

inline constexpr std::string_view kTemporaryMarker = ".tmp-";

// Calls write_contents(fd) on the temporary; throws CheckpointError naming the path on any failure
// (the temporary is removed then).
void write_file_atomically(const std::filesystem::path& path, const std::function<void(int fd)>& write_contents);

// Whether a directory entry is a temporary left by write_file_atomically.
bool is_temporary_name(std::string_view file_name);

}  // namespace themis::checkpoint
