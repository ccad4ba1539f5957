// web::HttpServer: serves GET, refuses writes and foreign Host headers, survives a throwing handler.
#include "web/http_server.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "http_get.h"

namespace themis::web {
namespace {

using testing::http_request;

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.get("/hello", [](const HttpRequest& request) {
      return HttpResponse{200, "text/plain", "hello " + request.param("name", "nobody") + "\n"};
    });
    server_.get("/broken", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("database is locked"); });
    server_.start();
    ASSERT_GT(server_.port(), 0);
  }
  HttpServer server_{parse_listen_address("127.0.0.1:0", "test")};
};

TEST_F(HttpServerTest, ServesGetWithQueryParameters) {
  const auto reply = http_request(server_.port(), "GET", "/hello?name=ada");
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.body, "hello ada\n");
  EXPECT_NE(reply.headers.find("X-Content-Type-Options: nosniff"), std::string::npos) << reply.headers;
  EXPECT_NE(reply.headers.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << reply.headers;
  EXPECT_EQ(http_request(server_.port(), "GET", "/nothing").status, 404);
}

TEST_F(HttpServerTest, IsReadOnly) {
  for (const std::string method : {"POST", "PUT", "DELETE", "PATCH"}) {
    const auto reply = http_request(server_.port(), method, "/hello");
    EXPECT_EQ(reply.status, 405) << method;
    EXPECT_NE(reply.headers.find("Allow: GET, HEAD"), std::string::npos) << reply.headers;
  }
  EXPECT_EQ(http_request(server_.port(), "HEAD", "/hello").status, 200);
}

TEST_F(HttpServerTest, OnLoopbackRefusesAHostHeaderNamingAnotherHost) {
  // DNS rebinding: a page from evil.example resolved to 127.0.0.1 sends Host: evil.example.
  EXPECT_EQ(http_request(server_.port(), "GET", "/hello", "evil.example").status, 403);
  EXPECT_EQ(http_request(server_.port(), "GET", "/hello", "evil.example:" + std::to_string(server_.port())).status, 403);
  EXPECT_EQ(http_request(server_.port(), "GET", "/hello", "localhost:" + std::to_string(server_.port())).status, 200);
  EXPECT_EQ(http_request(server_.port(), "GET", "/hello", "[::1]:80").status, 200);
  EXPECT_EQ(http_request(server_.port(), "GET", "/hello", "127.0.0.1").status, 200);
}

TEST_F(HttpServerTest, AThrowingHandlerIsAnsweredFiveHundredAndTheServerGoesOn) {
  const auto reply = http_request(server_.port(), "GET", "/broken");
  EXPECT_EQ(reply.status, 500);
  EXPECT_EQ(reply.body, "database is locked\n");
  EXPECT_EQ(http_request(server_.port(), "GET", "/hello").status, 200);
}

TEST(HttpServer, APortInUseIsAClearError) {
  HttpServer first(parse_listen_address("127.0.0.1:0", "test"));
  first.start();
  HttpServer second(parse_listen_address("127.0.0.1:" + std::to_string(first.port()), "test"));
  try {
    second.start();
    FAIL() << "bound a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot bind 127.0.0.1:" + std::to_string(first.port())), std::string::npos) << e.what();
  }
}

TEST(HttpServer, StopsPromptlyRightAfterStarting) {
  for (int i = 0; i < 20; ++i) {
    HttpServer server(parse_listen_address("127.0.0.1:0", "test"));
    server.start();
  }  // each destructor joins: a hang here fails the test by its timeout
}

}  // namespace
}  // namespace themis::web
