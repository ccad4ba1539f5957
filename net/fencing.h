#pragma once
// Self-fencing: the rule a nodelet and the coordinator both derive from the heartbeat settings the
// coordinator sends (Registered/HeartbeatAck: interval, lives), so that a worker of a host cut off from
// the coordinator is gone before its job is placed again anywhere (docs/reliability.md, "Fault matrix:
// nodes, partitions, workers").
//
// Times are measured by each side on its own monotonic rate; no clock is shared. Let D = interval × lives.
//  - The coordinator declares a host down when it has heard nothing from it for more than D.
//  - A nodelet counts its silence from the send time of the newest register/heartbeat the coordinator
//    answered: the coordinator heard that message at or after it was sent, so it cannot declare the host
//    down before answered + D.
//  - The nodelet sends its workers their checkpoint signal at answered + 2D and SIGKILLs what is left at
//    answered + 3D. The extra D before fencing lets a coordinator restart (which gives every host fresh
//    lives and re-places nothing) shorter than 2D cost no work.
//  - The coordinator keeps the jobs of a host it declared down (at T ≥ answered + D) out of rounds until
//    T + 2D + interval ≥ answered + 3D + interval: past the SIGKILL, with one interval for the nodelet's
//    loop to send it.
namespace themis::net {

constexpr double down_bound_s(long long interval_ms, long long lives) {
  return static_cast<double>(interval_ms) * static_cast<double>(lives) / 1000.0;  // no overflow on any values sent
}
constexpr double fence_start_s(long long interval_ms, long long lives) { return 2 * down_bound_s(interval_ms, lives); }
constexpr double fence_kill_s(long long interval_ms, long long lives) { return 3 * down_bound_s(interval_ms, lives); }
constexpr double lost_host_hold_s(long long interval_ms, long long lives) {
  return 2 * down_bound_s(interval_ms, lives) + static_cast<double>(interval_ms) / 1000.0;
}

}  // namespace themis::net
