#pragma once
// A checkpoint: an iteration, small text metadata and named opaque blobs (model weights, optimizer
// state, trainer state...). This library never interprets the blobs; the worker decides what they hold.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace themis::checkpoint {

struct Checkpoint {
  std::uint64_t iteration = 0;
  std::map<std::string, std::string> metadata;  // e.g. "job", "world_size", "model"
  std::map<std::string, std::string> blobs;     // name -> bytes

  bool operator==(const Checkpoint&) const = default;
};

// A checkpoint that cannot be read: the message names the file (when there is one) and what is wrong.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace themis::checkpoint
