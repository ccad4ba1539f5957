#pragma once
// The dispatch fuzzers' input: a sequence of records, each [selector byte][length: 2 bytes, little
// endian][frame], so one input can drive a conversation (register, submit, query, cancel, ...).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace themis::fuzz {

struct Record {
  std::uint8_t selector = 0;
  std::string frame;
};

inline std::vector<Record> split_records(const std::uint8_t* data, std::size_t size) {
  std::vector<Record> records;
  std::size_t at = 0;
  while (at < size && records.size() < 64) {
    Record record;
    record.selector = data[at++];
    std::size_t length = 0;
    if (at < size) length = data[at++];
    if (at < size) length |= static_cast<std::size_t>(data[at++]) << 8;
    if (length > size - at) length = size - at;
    record.frame.assign(reinterpret_cast<const char*>(data + at), length);
    at += length;
    records.push_back(std::move(record));
  }
  return records;
}

inline std::string join_record(std::uint8_t selector, const std::string& frame) {
  std::string out;
  out.push_back(static_cast<char>(selector));
  out.push_back(static_cast<char>(frame.size() & 0xff));
  out.push_back(static_cast<char>((frame.size() >> 8) & 0xff));
  return out + frame;
}

}  // namespace themis::fuzz
