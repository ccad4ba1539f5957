#include "checkpoint/checkpoint_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "checkpoint/crc32c.h"

namespace themis::checkpoint {
namespace {

constexpr std::size_t kHeaderBytes = 24;
constexpr std::size_t kTrailerBytes = 16;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}
std::uint64_t get_le(std::string_view bytes, std::size_t offset, int width) {
  std::uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(bytes[offset + static_cast<std::size_t>(i)]);
  }
  return v;
}

std::uint32_t checked_u32(std::size_t n, const char* what) {
  if (n > 0xFFFFFFFFU) throw CheckpointError(std::string(what) + " longer than 4 GiB");
  return static_cast<std::uint32_t>(n);
}

// Everything before the first blob's bytes; blobs are then streamed one after the other.
std::string encode_header(const Checkpoint& c) {
  std::string out;
  out.append(kMagic);
  put_u32(out, kFormatVersion);
  put_u32(out, 0);
  put_u64(out, c.iteration);
  put_u32(out, checked_u32(c.metadata.size(), "metadata count"));
  for (const auto& [key, value] : c.metadata) {
    put_u32(out, checked_u32(key.size(), "metadata key"));
    out.append(key);
    put_u32(out, checked_u32(value.size(), "metadata value"));
    out.append(value);
  }
  put_u32(out, checked_u32(c.blobs.size(), "blob count"));
  return out;
}

std::string encode_blob_header(const std::string& name, const std::string& bytes) {
  std::string out;
  put_u32(out, checked_u32(name.size(), "blob name"));
  out.append(name);
  put_u64(out, bytes.size());
  return out;
}

std::uint64_t encoded_size(const Checkpoint& c) {
  std::uint64_t size = encode_header(c).size() + kTrailerBytes;
  for (const auto& [name, bytes] : c.blobs) size += 4 + name.size() + 8 + bytes.size();
  return size;
}

// Reads fields in order, failing with a message that says which field overran the content.
class Cursor {
 public:
  Cursor(std::string_view bytes, std::size_t begin) : bytes_(bytes), pos_(begin) {}
  std::uint64_t integer(int width, const char* what) {
    need(static_cast<std::size_t>(width), what);
    const std::uint64_t v = get_le(bytes_, pos_, width);
    pos_ += static_cast<std::size_t>(width);
    return v;
  }
  std::string text(std::uint64_t size, const char* what) {
    need(size, what);
    std::string out(bytes_.substr(pos_, static_cast<std::size_t>(size)));
    pos_ += static_cast<std::size_t>(size);
    return out;
  }
  std::size_t position() const { return pos_; }

 private:
  void need(std::uint64_t n, const char* what) const {
    if (n > bytes_.size() - pos_) {
      throw CheckpointError("malformed: " + std::string(what) + " at byte " + std::to_string(pos_) +
                            " needs " + std::to_string(n) + " bytes, only " +
                            std::to_string(bytes_.size() - pos_) + " remain");
    }
  }
  std::string_view bytes_;
  std::size_t pos_;
};

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw CheckpointError(std::string("write failed: ") + std::strerror(errno));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string encode(const Checkpoint& checkpoint) {
  std::string out = encode_header(checkpoint);
  out.reserve(encoded_size(checkpoint));
  for (const auto& [name, bytes] : checkpoint.blobs) {
    out.append(encode_blob_header(name, bytes));
    out.append(bytes);
  }
  put_u64(out, out.size() + kTrailerBytes);
  put_u32(out, crc32c(out));
  out.append(kEndMagic);
  return out;
}

void write_encoded(int fd, const Checkpoint& checkpoint, const WriteOptions& options) {
  const std::size_t chunk = options.chunk_bytes == 0 ? std::size_t{8} << 20 : options.chunk_bytes;
  std::uint32_t crc = 0;
  std::uint64_t written = 0;
  auto emit = [&](std::string_view bytes) {
    for (std::size_t off = 0; off < bytes.size(); off += chunk) {
      const std::size_t n = std::min(chunk, bytes.size() - off);
      crc = crc32c_extend(crc, bytes.data() + off, n);
      write_all(fd, bytes.data() + off, n);
      written += n;
      if (options.on_progress) options.on_progress(written);
    }
  };
  emit(encode_header(checkpoint));
  for (const auto& [name, bytes] : checkpoint.blobs) {
    emit(encode_blob_header(name, bytes));
    emit(bytes);
  }
  std::string size_field;
  put_u64(size_field, written + kTrailerBytes);
  emit(size_field);
  std::string tail;
  put_u32(tail, crc);
  tail.append(kEndMagic);
  write_all(fd, tail.data(), tail.size());
}

Checkpoint decode(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes + kTrailerBytes) {
    throw CheckpointError("truncated: " + std::to_string(bytes.size()) + " bytes, smaller than any checkpoint (" +
                          std::to_string(kHeaderBytes + kTrailerBytes) + ")");
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) throw CheckpointError("bad magic: not a themis checkpoint");
  if (bytes.substr(bytes.size() - kEndMagic.size()) != kEndMagic) {
    throw CheckpointError("truncated: no end marker (file has " + std::to_string(bytes.size()) + " bytes)");
  }
  const std::uint64_t declared = get_le(bytes, bytes.size() - kTrailerBytes, 8);
  if (declared != bytes.size()) {
    throw CheckpointError("size mismatch: trailer declares " + std::to_string(declared) + " bytes, file has " +
                          std::to_string(bytes.size()));
  }
  const auto stored_crc = static_cast<std::uint32_t>(get_le(bytes, bytes.size() - 8, 4));
  const std::uint32_t actual_crc = crc32c(bytes.substr(0, bytes.size() - 8));
  if (stored_crc != actual_crc) {
    std::ostringstream msg;
    msg << std::hex << "checksum mismatch: stored crc32c 0x" << stored_crc << ", content has 0x" << actual_crc;
    throw CheckpointError(msg.str());
  }
  const auto version = static_cast<std::uint32_t>(get_le(bytes, 8, 4));
  if (version != kFormatVersion) {
    throw CheckpointError("unsupported format version " + std::to_string(version) + " (this build reads " +
                          std::to_string(kFormatVersion) + ")");
  }
  const std::string_view content = bytes.substr(0, bytes.size() - kTrailerBytes);
  Checkpoint c;
  Cursor in(content, 16);
  c.iteration = in.integer(8, "iteration");
  const std::uint64_t n_meta = in.integer(4, "metadata count");
  for (std::uint64_t i = 0; i < n_meta; ++i) {
    std::string key = in.text(in.integer(4, "metadata key length"), "metadata key");
    std::string value = in.text(in.integer(4, "metadata value length"), "metadata value");
    c.metadata.insert_or_assign(std::move(key), std::move(value));
  }
  const std::uint64_t n_blobs = in.integer(4, "blob count");
  for (std::uint64_t i = 0; i < n_blobs; ++i) {
    std::string name = in.text(in.integer(4, "blob name length"), "blob name");
    std::string blob = in.text(in.integer(8, "blob size"), "blob bytes");
    c.blobs.insert_or_assign(std::move(name), std::move(blob));
  }
  if (in.position() != content.size()) {
    throw CheckpointError("malformed: " + std::to_string(content.size() - in.position()) +
                          " unexplained bytes after the last blob");
  }
  return c;
}

Checkpoint read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(path.string() + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size < 0) throw CheckpointError(path.string() + ": cannot determine size");
  bytes.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(bytes.data(), size);
  if (in.gcount() != size) throw CheckpointError(path.string() + ": short read");
  try {
    return decode(bytes);
  } catch (const CheckpointError& e) {
    throw CheckpointError(path.string() + ": " + e.what());
  }
}

}  // namespace themis::checkpoint
