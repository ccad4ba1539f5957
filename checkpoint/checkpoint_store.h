#pragma once
// A directory of checkpoints, <dir>/ckpt-<iteration>.thm. The newest file that verifies wins; a corrupt
// or partial file is skipped with a reason and the previous good one is used. Saving keeps the newest K.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_file.h"

namespace themis::checkpoint {

struct SkippedFile {
  std::filesystem::path path;
  std::string reason;  // e.g. "checksum mismatch: stored crc32c 0x..., content has 0x..."
};

struct LoadResult {
  std::optional<Checkpoint> checkpoint;  // empty when no file verifies (or the directory has none)
  std::filesystem::path path;            // the file it came from
  std::vector<SkippedFile> skipped;      // newer files that did not verify, newest first
};

struct StoredFile {
  std::uint64_t iteration;
  std::filesystem::path path;
};

class CheckpointStore {
 public:
  // Creates the directory when missing. keep_last >= 1.
  explicit CheckpointStore(std::filesystem::path dir, std::size_t keep_last = 3);

  const std::filesystem::path& directory() const { return dir_; }
  std::filesystem::path path_for(std::uint64_t iteration) const;

  // Writes ckpt-<iteration>.thm atomically, then prunes: keeps it and the keep_last-1 newest older files.
  // Files with a higher iteration belong to an abandoned history (resumed from an older one) and go.
  std::filesystem::path save(const Checkpoint& checkpoint, const WriteOptions& options = {});

  LoadResult load_latest() const;

  // Checkpoint files by ascending iteration (unverified); other names in the directory are ignored.
  std::vector<StoredFile> list() const;

  // Removes temporaries left by writers that were killed mid-write. Call only when no writer runs.
  std::size_t remove_temporaries() const;

 private:
  std::filesystem::path dir_;
  std::size_t keep_last_;
};

// "ckpt-120.thm" -> 120; nullopt for any other name.
std::optional<std::uint64_t> parse_checkpoint_name(const std::string& file_name);

}  // namespace themis::checkpoint
