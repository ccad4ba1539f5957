#include "checkpoint/crc32c.h"

#include <array>
#include <cstring>

namespace themis::checkpoint {
namespace {

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? (c >> 1) ^ 0x82F63B78U : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t i = 0; i < 256; ++i) {
    for (std::size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFFU];
  }
  return t;
}

constexpr Tables kTables = make_tables();

std::uint32_t software_extend(std::uint32_t crc, const unsigned char* p, std::size_t size);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// SSE4.2's crc32 instruction computes the same CRC-32C, 8 bytes per instruction; chosen at run time,
// so the file format (and every checksum) is the same on hosts without it.
__attribute__((target("sse4.2"))) std::uint32_t hardware_extend(std::uint32_t crc, const unsigned char* p,
                                                                std::size_t size) {
  std::uint64_t c = ~crc;
  while (size >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    size -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (size-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}

bool has_hardware_crc() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#else
std::uint32_t hardware_extend(std::uint32_t crc, const unsigned char* p, std::size_t size) {
  return software_extend(crc, p, size);
}
bool has_hardware_crc() { return false; }
#endif

}  // namespace

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  return has_hardware_crc() ? hardware_extend(crc, p, size) : software_extend(crc, p, size);
}

std::uint32_t crc32c_extend_portable(std::uint32_t crc, const void* data, std::size_t size) {
  return software_extend(crc, static_cast<const unsigned char*>(data), size);
}

namespace {

std::uint32_t software_extend(std::uint32_t crc, const unsigned char* p, std::size_t size) {
  std::uint32_t c = ~crc;
  while (size >= 8) {
    // Little-endian loads: the tables are built for the reflected (LSB-first) form.
    const std::uint32_t lo = c ^ (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                                  static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24);
    c = kTables[7][lo & 0xFFU] ^ kTables[6][(lo >> 8) & 0xFFU] ^ kTables[5][(lo >> 16) & 0xFFU] ^
        kTables[4][lo >> 24] ^ kTables[3][p[4]] ^ kTables[2][p[5]] ^ kTables[1][p[6]] ^ kTables[0][p[7]];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) c = kTables[0][(c ^ *p++) & 0xFFU] ^ (c >> 8);
  return ~c;
}

}  // namespace

}  // namespace themis::checkpoint
