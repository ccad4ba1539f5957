#include "tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace themis::faults {

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

TcpProxy::TcpProxy(int target_port) : target_port_(target_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto address = loopback(0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    throw std::runtime_error(std::string("tcp proxy: cannot listen on 127.0.0.1: ") + std::strerror(errno));
  }
  socklen_t length = sizeof(address);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve(); });
}

TcpProxy::~TcpProxy() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

void TcpProxy::serve() {
  struct Link {
    int client = -1;
    int server = -1;
  };
  std::vector<Link> links;
  auto close_link = [](Link& link) {
    ::close(link.client);
    ::close(link.server);
    link.client = link.server = -1;
  };
  std::vector<char> buffer(64 * 1024);
  while (!stop_) {
    if (partitioned_) {
      for (auto& link : links) close_link(link);
      links.clear();
    }
    std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
    for (const auto& link : links) {
      fds.push_back({link.client, POLLIN, 0});
      fds.push_back({link.server, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) {
        const int server = partitioned_ ? -1 : ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        const auto target = loopback(target_port_);
        if (server >= 0 && ::connect(server, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) == 0) {
          links.push_back({client, server});
        } else {
          ::close(client);
          if (server >= 0) ::close(server);
        }
      }
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
      for (int side = 0; side < 2; ++side) {
        const pollfd& p = fds[1 + 2 * i + static_cast<std::size_t>(side)];
        if (links[i].client < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const int from = side == 0 ? links[i].client : links[i].server;
        const int to = side == 0 ? links[i].server : links[i].client;
        const ssize_t n = ::recv(from, buffer.data(), buffer.size(), 0);
        if (n <= 0 || !write_all(to, buffer.data(), static_cast<std::size_t>(n))) close_link(links[i]);
      }
    }
    std::erase_if(links, [](const Link& link) { return link.client < 0; });
  }
  for (auto& link : links) close_link(link);
}

}  // namespace themis::faults
