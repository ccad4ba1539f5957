#pragma once
// Identifiers shared by every part of themis. Plain integers: they are stored in SQLite, sent over the
// wire and used as indices, so they stay trivially copyable and comparable.
#include <cstdint>

namespace themis {

using GpuIndex = std::int32_t;  // position of a GPU in its Cluster (0 .. size-1)
using AppId = std::int64_t;     // one submission ("42")
using JobId = std::int64_t;     // one hyper-parameter job of an app ("42_3" is app 42, job 3)
using RoundId = std::int64_t;   // one auction round
using Seconds = double;         // durations and instants on the scheduler's clock (virtual in the simulator)

}  // namespace themis
