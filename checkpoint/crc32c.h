#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI, ext4 and LevelDB.
// SSE4.2's crc32 instruction where the CPU has it (checked at run time), else software slicing-by-8;
// both give the same value, so a file checks the same on every host.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace themis::checkpoint {

// Extends a running CRC-32C with `size` bytes. Start from 0; crc32c_extend(0, "123456789") == 0xE3069283.
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size);

// The software path alone (tests compare it with the instruction; benchmarks show both).
std::uint32_t crc32c_extend_portable(std::uint32_t crc, const void* data, std::size_t size);

inline std::uint32_t crc32c(std::string_view bytes) { return crc32c_extend(0, bytes.data(), bytes.size()); }

}  // namespace themis::checkpoint
