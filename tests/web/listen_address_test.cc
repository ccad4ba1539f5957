// http_listen: loopback by default, one interface's address on purpose, never a wildcard.
#include "web/listen_address.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace themis::web {
namespace {

TEST(ListenAddress, AcceptsLoopbackAddresses) {
  for (const auto& [text, host, port] : std::vector<std::tuple<std::string, std::string, int>>{
           {"127.0.0.1:9310", "127.0.0.1", 9310}, {"127.0.0.2:80", "127.0.0.2", 80},
           {"localhost:9310", "localhost", 9310}, {"[::1]:9310", "::1", 9310}, {"127.0.0.1:0", "127.0.0.1", 0}}) {
    const ListenAddress a = parse_listen_address(text, "coordinator.http_listen");
    EXPECT_EQ(a.host, host) << text;
    EXPECT_EQ(a.port, port) << text;
    EXPECT_TRUE(a.loopback) << text;
  }
}

TEST(ListenAddress, AnInterfaceAddressWrittenOutIsAcceptedAsNotLoopback) {
  const ListenAddress v4 = parse_listen_address("10.1.2.3:9310", "x");
  EXPECT_EQ(v4.host, "10.1.2.3");
  EXPECT_FALSE(v4.loopback);
  const ListenAddress v6 = parse_listen_address("[fd00::5]:9310", "x");
  EXPECT_EQ(v6.host, "fd00::5");
  EXPECT_FALSE(v6.loopback);
}

TEST(ListenAddress, RefusesWildcardsHostNamesAndBadPortsNamingTheSetting) {
  for (const std::string text : {"0.0.0.0:9310", "[::]:9310", "*:9310", ":9310", "example.org:9310", "9310",
                                 "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:93x", "::1:9310",
                                 "[127.0.0.1]:9310"}) {
    try {
      parse_listen_address(text, "nodelet.http_listen");
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("nodelet.http_listen: \"" + text + "\": ", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace themis::web
