#pragma once
// systemd's notify protocol (sd_notify(3)) without libsystemd: one datagram to $NOTIFY_SOCKET.
#include <string>

namespace themis::net {

// Sends e.g. "READY=1\nSTATUS=serving". Returns false when NOTIFY_SOCKET is unset or sending failed.
bool sd_notify(const std::string& state);

// WATCHDOG_USEC as microseconds, or 0 when no watchdog is configured for this process.
long long sd_watchdog_usec();

}  // namespace themis::net
