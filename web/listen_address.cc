#include "web/listen_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <stdexcept>

namespace themis::web {

ListenAddress parse_listen_address(const std::string& text, const std::string& setting) {
  const auto fail = [&](const std::string& why) {
    return std::invalid_argument(setting + ": \"" + text + "\": " + why);
  };
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) throw fail("must be HOST:PORT, e.g. \"127.0.0.1:9310\"");
  std::string host = text.substr(0, colon);
  const std::string port_text = text.substr(colon + 1);
  int port = -1;
  const auto parsed = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || parsed.ec != std::errc() || parsed.ptr != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    throw fail("the port must be a number in 0..65535");
  }
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  ListenAddress address{host, port, true};
  if (host.empty() || host == "*" || host == "0.0.0.0" || host == "::") {
    throw fail("a wildcard address serves every interface, and the endpoint has no authentication; use "
               "127.0.0.1 (the default) or name one interface's address");
  }
  if (host == "localhost") return address;
  in_addr v4{};
  in6_addr v6{};
  if (!bracketed && inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    address.loopback = (ntohl(v4.s_addr) >> 24) == 127;
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (!bracketed) throw fail("write an IPv6 address in brackets, e.g. \"[::1]:9310\"");
    address.loopback = IN6_IS_ADDR_LOOPBACK(&v6);
    if (IN6_IS_ADDR_UNSPECIFIED(&v6)) throw fail("a wildcard address is refused; name one interface's address");
  } else {
    throw fail("the host must be localhost or an IP address (no host names: they may resolve to a wildcard)");
  }
  return address;
}

}  // namespace themis::web
