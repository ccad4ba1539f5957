#pragma once
// A small read-only HTTP server on its own threads (cpp-httplib), for /metrics and the dashboard. It
// answers GET and HEAD only; bound to loopback, it also refuses a Host header that does not name the
// loopback (a web page elsewhere cannot reach it through DNS rebinding).
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "web/listen_address.h"

namespace themis::web {

struct HttpRequest {
  std::string path;
  std::multimap<std::string, std::string> params;  // the query string
  std::string param(const std::string& name, const std::string& fallback = "") const {
    const auto it = params.find(name);
    return it == params.end() ? fallback : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  // A handler that throws is answered 500 with the exception's text; the server goes on.
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  explicit HttpServer(ListenAddress address);
  ~HttpServer();  // stops serving and joins its threads
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Before start().
  void get(const std::string& path, Handler handler);
  // Binds (std::runtime_error naming the address when it cannot) and serves on its own thread.
  void start();
  int port() const { return port_; }
  const ListenAddress& address() const { return address_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ListenAddress address_;
  int port_ = 0;
};

}  // namespace themis::web
