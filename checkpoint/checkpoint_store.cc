#include "checkpoint/checkpoint_store.h"

#include <algorithm>
#include <charconv>

#include "checkpoint/atomic_file.h"

namespace themis::checkpoint {
namespace {
constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".thm";
}  // namespace

std::optional<std::uint64_t> parse_checkpoint_name(const std::string& file_name) {
  const std::string_view name = file_name;
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) || !name.ends_with(kSuffix)) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;  // one spelling per iteration
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

CheckpointStore::CheckpointStore(std::filesystem::path dir, std::size_t keep_last)
    : dir_(std::move(dir)), keep_last_(keep_last) {
  if (keep_last_ == 0) throw CheckpointError("checkpoint store " + dir_.string() + ": keep_last must be at least 1");
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw CheckpointError(dir_.string() + ": cannot create checkpoint directory: " + ec.message());
}

std::filesystem::path CheckpointStore::path_for(std::uint64_t iteration) const {
  return dir_ / (std::string(kPrefix) + std::to_string(iteration) + std::string(kSuffix));
}

std::filesystem::path CheckpointStore::save(const Checkpoint& checkpoint, const WriteOptions& options) {
  const std::filesystem::path path = path_for(checkpoint.iteration);
  write_file_atomically(path, [&](int fd) { write_encoded(fd, checkpoint, options); });
  std::vector<StoredFile> files = list();
  std::size_t older_kept = 0;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    if (it->iteration == checkpoint.iteration) continue;
    const bool keep = it->iteration < checkpoint.iteration && ++older_kept < keep_last_;
    if (!keep) {
      std::error_code ec;  // best effort: a file we cannot remove is skipped or pruned next time
      std::filesystem::remove(it->path, ec);
    }
  }
  return path;
}

std::vector<StoredFile> CheckpointStore::list() const {
  std::vector<StoredFile> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (auto iteration = parse_checkpoint_name(entry.path().filename().string())) {
      files.push_back({*iteration, entry.path()});
    }
  }
  if (ec) throw CheckpointError(dir_.string() + ": cannot list checkpoint directory: " + ec.message());
  std::sort(files.begin(), files.end(), [](const StoredFile& a, const StoredFile& b) { return a.iteration < b.iteration; });
  return files;
}

LoadResult CheckpointStore::load_latest() const {
  LoadResult result;
  const std::vector<StoredFile> files = list();
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      Checkpoint c = read_file(it->path);
      if (c.iteration != it->iteration) {
        result.skipped.push_back({it->path, "iteration inside the file (" + std::to_string(c.iteration) +
                                                ") does not match its name"});
        continue;
      }
      result.checkpoint = std::move(c);
      result.path = it->path;
      return result;
    } catch (const CheckpointError& e) {
      std::string reason = e.what();
      const std::string prefix = it->path.string() + ": ";
      if (reason.starts_with(prefix)) reason.erase(0, prefix.size());
      result.skipped.push_back({it->path, std::move(reason)});
    }
  }
  return result;
}

std::size_t CheckpointStore::remove_temporaries() const {
  std::size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_temporary_name(name) && name.find(kPrefix) != std::string::npos) {
      std::error_code rm;
      if (std::filesystem::remove(entry.path(), rm)) ++removed;
    }
  }
  return removed;
}

}  // namespace themis::checkpoint
