#pragma once
// The checkpoint file format (version 1). All integers little-endian.
//
//   offset 0   magic "THMSCKPT" (8 bytes)
//          8   u32 format version (1)         12  u32 reserved (0)
//         16   u64 iteration
//         24   u32 metadata count, then per entry: u32 key length, key, u32 value length, value
//              u32 blob count, then per blob:      u32 name length, name, u64 size, bytes
//   trailer    u64 total file size, u32 CRC-32C of every byte before this field, "TEND" (4 bytes)
//
// The trailer makes a truncated file detectable without trusting anything inside it, and the CRC
// covers the whole content, the header included.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"

namespace themis::checkpoint {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::string_view kMagic = "THMSCKPT";
inline constexpr std::string_view kEndMagic = "TEND";

struct WriteOptions {
  // Called after each chunk written with the bytes written so far (progress, throttling in tests).
  std::function<void(std::uint64_t bytes_written)> on_progress;
  std::size_t chunk_bytes = std::size_t{8} << 20;
};

// The whole encoded file, in memory (used to ship a checkpoint between ranks).
std::string encode(const Checkpoint& checkpoint);

// Parses and verifies an encoded file; throws CheckpointError("<what is wrong>").
Checkpoint decode(std::string_view bytes);

// Streams the encoding to an open file descriptor without building it in memory first.
void write_encoded(int fd, const Checkpoint& checkpoint, const WriteOptions& options = {});

// Reads and verifies a file; throws CheckpointError("<path>: <what is wrong>").
Checkpoint read_file(const std::filesystem::path& path);

}  // namespace themis::checkpoint
