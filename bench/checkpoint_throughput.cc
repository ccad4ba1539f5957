// Checkpoint write and read throughput: checkpoint_throughput DIR [MiB (256)] [repetitions (3)].
// Writes go through CheckpointStore::save (temp file, CRC-32C, fsync, rename, fsync dir); reads through
// read_file (read all, verify CRC-32C, copy the blobs out).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/crc32c.h"
#include "bench/bench_support.h"

int main(int argc, char** argv) {
  using themis::checkpoint::Checkpoint;
  using Clock = std::chrono::steady_clock;
  constexpr std::string_view kUsage =
      "usage: checkpoint_throughput DIR [MiB (256)] [repetitions (3)]\n"
      "  writes and reads back a checkpoint of MiB in DIR/ckpt-bench (removed at the end)\n";
  std::vector<std::string> args;
  if (const int code = themis::bench::positional_args("checkpoint_throughput", kUsage, argc, argv, 1, 3, args); code >= 0)
    return code;
  const std::filesystem::path dir = args[0];
  std::size_t mib = 256;
  int reps = 3;
  try {
    if (args.size() > 1) mib = static_cast<std::size_t>(themis::bench::positive_int("MiB", args[1]));
    if (args.size() > 2) reps = themis::bench::positive_int("repetitions", args[2]);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "checkpoint_throughput: %s\n", e.what());
    return 2;
  }
  Checkpoint c;
  std::string blob(mib << 20, '\0');
  for (std::size_t i = 0; i < blob.size(); i += 4096) blob[i] = static_cast<char>(i >> 12);
  c.blobs["model"] = std::move(blob);

  const auto crc_start = Clock::now();
  const std::uint32_t crc = themis::checkpoint::crc32c(c.blobs["model"]);
  const double crc_s = std::chrono::duration<double>(Clock::now() - crc_start).count();
  std::printf("crc32c alone: %.0f MB/s (crc %08x)\n", static_cast<double>(mib << 20) / 1e6 / crc_s, crc);

  themis::checkpoint::CheckpointStore store(dir / "ckpt-bench", 1);
  for (int r = 0; r < reps; ++r) {
    c.iteration = static_cast<std::uint64_t>(r + 1);
    const auto w0 = Clock::now();
    const auto path = store.save(c);
    const double write_s = std::chrono::duration<double>(Clock::now() - w0).count();
    const auto bytes = static_cast<double>(std::filesystem::file_size(path));
    const auto r0 = Clock::now();
    const Checkpoint back = themis::checkpoint::read_file(path);
    const double read_s = std::chrono::duration<double>(Clock::now() - r0).count();
    if (back.blobs.at("model").size() != (mib << 20)) return 1;
    std::printf("rep %d: %.1f MB  write %.3f s = %.0f MB/s   read+verify %.3f s = %.0f MB/s\n", r + 1, bytes / 1e6,
                write_s, bytes / 1e6 / write_s, read_s, bytes / 1e6 / read_s);
  }
  std::filesystem::remove_all(dir / "ckpt-bench");
  return 0;
}
