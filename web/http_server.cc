#include "web/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace themis::web {

namespace {

// The host part of a Host header: "127.0.0.1:9310" -> "127.0.0.1", "[::1]:9310" -> "::1".
std::string host_of_header(const std::string& header) {
  if (!header.empty() && header.front() == '[') {
    const auto close = header.find(']');
    return close == std::string::npos ? header : header.substr(1, close - 1);
  }
  return header.substr(0, header.find(':'));
}

bool names_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

void set_security_headers(httplib::Response& res) {
  // The dashboard's own files only: no inline script, nothing fetched from elsewhere, never framed.
  res.set_header("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Cache-Control", "no-store");
}

}  // namespace

struct HttpServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> exited{false};  // listen_after_bind returned
};

HttpServer::HttpServer(ListenAddress address) : impl_(std::make_unique<Impl>()), address_(std::move(address)) {
  auto& server = impl_->server;
  // A browser opens up to 6 connections to load the dashboard and keeps them alive: with fewer threads
  // its later requests waited for an idle connection to time out. Idle connections close after 1 s.
  server.new_task_queue = [] { return new httplib::ThreadPool(6); };
  server.set_keep_alive_timeout(1);
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  server.set_payload_max_length(0);
  // httplib's default sets SO_REUSEPORT, with which a second daemon binds the same port and shares its
  // connections; SO_REUSEADDR alone lets a restart bind again while old connections linger.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  if (address_.host.find(':') != std::string::npos) server.set_address_family(AF_INET6);
  const bool loopback = address_.loopback;
  server.set_pre_routing_handler([loopback](const httplib::Request& req, httplib::Response& res) {
    set_security_headers(res);
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("read-only: GET and HEAD only\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (loopback && !names_loopback(host_of_header(req.get_header_value("Host")))) {
      res.status = 403;
      res.set_content("this endpoint serves loopback clients: the Host header must name 127.0.0.1, ::1 or localhost\n",
                      "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

HttpServer::~HttpServer() {
  if (impl_->thread.joinable()) {
    // stop() does nothing until the listening loop runs: wait for it (or for its end) first.
    while (!impl_->server.is_running() && !impl_->exited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    impl_->server.stop();
    impl_->thread.join();
  }
}

void HttpServer::get(const std::string& path, Handler handler) {
  impl_->server.Get(path, [handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    HttpRequest request{req.path, {}};
    for (const auto& [key, value] : req.params) request.params.emplace(key, value);
    try {
      const HttpResponse response = handler(request);
      res.status = response.status;
      res.set_content(response.body, response.content_type.c_str());
    } catch (const std::exception& e) {
      res.status = 500;
      res.set_content(std::string(e.what()) + "\n", "text/plain; charset=utf-8");
    }
  });
}

void HttpServer::start() {
  auto& server = impl_->server;
  const std::string where = (address_.host.find(':') != std::string::npos ? "[" + address_.host + "]" : address_.host) +
                            ":" + std::to_string(address_.port);
  if (address_.port == 0) {
    port_ = server.bind_to_any_port(address_.host);
    if (port_ <= 0) throw std::runtime_error("http_listen: cannot bind " + where);
  } else {
    if (!server.bind_to_port(address_.host, address_.port)) {
      throw std::runtime_error("http_listen: cannot bind " + where + " (in use, or not an address of this machine)");
    }
    port_ = address_.port;
  }
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->exited = true;
  });
}

}  // namespace themis::web
