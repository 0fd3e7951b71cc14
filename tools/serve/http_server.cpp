// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <system_error>
#include <thread>

namespace baton::serve::http {

namespace {

using clock = std::chrono::steady_clock;

clock::time_point after(double seconds) {
  return clock::now() +
         std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
}

int ms_until(clock::time_point deadline) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
  return ms <= 0 ? 0 : static_cast<int>(std::min<long long>(ms, 1 << 30));
}

const char* reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 417:
      return "Expectation Failed";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

/// One connection's socket (non-blocking): reads into a buffer that keeps what follows the
/// current request (pipelining), writes with a deadline per write.
class Conn {
 public:
  Conn(int fd, double write_seconds) : fd_(fd), write_seconds_(write_seconds) {}
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  std::string buf;  ///< bytes read and not yet used

  enum class Read { data, eof, timeout, woken };
  /// Reads what is there into buf, waiting until `deadline` (and, with `wake`, until that
  /// eventfd is readable).
  Read read_more(clock::time_point deadline, int wake = -1) {
    for (;;) {
      char tmp[16384];
      const ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
      if (n > 0) {
        buf.append(tmp, static_cast<std::size_t>(n));
        return Read::data;
      }
      if (n == 0) return Read::eof;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return Read::eof;
      pollfd p[2] = {{fd_, POLLIN, 0}, {wake, POLLIN, 0}};
      const int r = ::poll(p, wake >= 0 ? 2 : 1, ms_until(deadline));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return Read::timeout;
      if (wake >= 0 && (p[1].revents & POLLIN) && !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        return Read::woken;
    }
  }

  /// Writes all of `data`; false when the client is gone or stops reading for write_seconds.
  bool write(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n > 0) {
        data.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
      pollfd p{fd_, POLLOUT, 0};
      const int r = ::poll(&p, 1, static_cast<int>(write_seconds_ * 1000));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0 || (p.revents & (POLLERR | POLLHUP))) return false;
    }
    return true;
  }

  /// Closes after an answer that ends the connection: our side is shut first and what the
  /// client still sends is read and dropped for a moment, so that closing with unread bytes
  /// (which makes the kernel send a reset) cannot destroy the answer before the client reads it.
  void linger_close() {
    ::shutdown(fd_, SHUT_WR);
    const auto deadline = after(1.0);
    std::size_t dropped = 0;
    while (dropped < (std::size_t(8) << 20)) {
      buf.clear();
      if (read_more(deadline) != Read::data) break;
      dropped += buf.size();
    }
    ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  double write_seconds_;
};

/// The code of an error the HTTP layer answers with `status` (shutting_down is said where it
/// happens).
std::string code_of(int status) {
  switch (status) {
    case 413:
      return "body_too_large";
    case 414:
      return "request_line_too_long";
    case 431:
      return "headers_too_large";
    case 503:
      return "too_many_connections";
    default:
      return "";
  }
}

std::string head_of(int status, std::string_view content_type, bool keep_alive,
                    const std::vector<Header>& extra) {
  std::string h = "HTTP/1.1 " + std::to_string(status) + " " + reason(status) + "\r\n";
  if (!content_type.empty()) h += "Content-Type: " + std::string(content_type) + "\r\n";
  h += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const Header& x : extra) h += x.name + ": " + x.value + "\r\n";
  return h;
}

std::string chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out = size;
  out.append(data);
  out += "\r\n";
  return out;
}

std::string peer_address(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, host, sizeof host);
  if (a.ss_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, host, sizeof host);
  return host;
}

}  // namespace

Server::Server(Options opt, Handler handler, ErrorBody error_body)
    : opt_(std::move(opt)), handler_(std::move(handler)), error_body_(std::move(error_body)) {
  accept_wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  idle_wake_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  BATON_CHECK(accept_wake_ >= 0 && idle_wake_ >= 0, io_error, "baton serve: eventfd failed");
}

Server::~Server() {
  stop();
  std::unique_lock lock(mutex_);
  closed_.wait(lock, [&] { return open_ == 0; });
  lock.unlock();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(accept_wake_);
  ::close(idle_wake_);
}

int Server::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  BATON_CHECK(::getaddrinfo(host.c_str(), service.c_str(), &hints, &res) == 0 && res, io_error,
              "baton serve: cannot resolve '", baton::detail::excerpt(host), "'");
  const int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int yes = 1;
  const bool ok = fd >= 0 && ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) == 0 &&
                  ::bind(fd, res->ai_addr, res->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0;
  ::freeaddrinfo(res);
  if (!ok) {
    if (fd >= 0) ::close(fd);
    BATON_FAIL(io_error, "baton serve: cannot bind ", host, ":", port,
               " (in use, or not an address of this machine)");
  }
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  listen_fd_ = fd;
  return a.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(a).sin6_port)
                                 : ntohs(reinterpret_cast<sockaddr_in&>(a).sin_port);
}

void Server::run() {
  while (!draining_.load()) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {accept_wake_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
    if (p[1].revents & POLLIN) break;
    if (p[0].revents & POLLIN) accept_ready(false);
  }
  // Connections the kernel completed before the drain began are taken in (their clients have
  // written requests that get an answer: 503) rather than reset by closing the socket.
  accept_ready(true);
  ::close(listen_fd_);
  listen_fd_ = -1;
  std::unique_lock lock(mutex_);
  closed_.wait(lock, [&] { return stopping_.load() && open_ == 0; });
}

void Server::accept_ready(bool all) {
  for (int k = 0; all || k < 64; ++k) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    const int fd =
        ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: none left; EMFILE and the like: try again at the next wake
    }
    start_connection(fd, peer_address(a));
  }
}

void Server::start_connection(int fd, std::string peer) {
  std::string refused;
  {
    const std::lock_guard lock(mutex_);
    if (open_ >= opt_.max_connections) {
      refused = "the server has " + std::to_string(open_) + " connections open (its limit)";
    } else if (per_client_[peer] >= opt_.max_client_connections) {
      refused = "this client has " + std::to_string(per_client_[peer]) +
                " connections open (the limit per client)";
    } else {
      ++open_;
      ++per_client_[peer];
    }
  }
  if (refused.empty()) {
    try {
      std::thread([this, fd, peer] {
        serve(fd, peer);
        const std::lock_guard lock(mutex_);
        if (--per_client_[peer] == 0) per_client_.erase(peer);
        --open_;
        closed_.notify_all();  // under the lock: the server outlives this unlock
      }).detach();
      return;
    } catch (const std::system_error&) {
      const std::lock_guard lock(mutex_);
      if (--per_client_[peer] == 0) per_client_.erase(peer);
      --open_;
      refused = "the system refused a thread for this connection";
    }
  }
  // Refused: a short answer that fits the socket's buffer, without waiting.
  const std::string body = error_body_(503, refused, code_of(503));
  std::string out = head_of(503, "application/json", false, {}) +
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

void Server::stop_accepting() {
  if (draining_.exchange(true)) return;
  const std::uint64_t one = 1;
  (void)!::write(accept_wake_, &one, sizeof one);
}

void Server::stop() {
  stop_accepting();
  if (stopping_.exchange(true)) return;
  const std::uint64_t one = 1;
  (void)!::write(idle_wake_, &one, sizeof one);
  const std::lock_guard lock(mutex_);
  closed_.notify_all();
}

void Server::serve(int fd, const std::string& peer) {
  Conn c(fd, opt_.write_seconds);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const auto refuse = [&](int status, const std::string& message, const std::string& code = "") {
    const std::string body = error_body_(status, message, code.empty() ? code_of(status) : code);
    (void)c.write(head_of(status, "application/json", false, {}) +
                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
    c.linger_close();
  };
  for (;;) {
    // Between requests: wait for the next one's first byte (unless it is buffered already).
    if (c.buf.empty()) {
      if (stopping_.load()) return;
      const Conn::Read r = c.read_more(after(opt_.idle_seconds), idle_wake_);
      if (r != Conn::Read::data) return;
    }
    // The head, within head_seconds of its first byte.
    const auto head_deadline = after(opt_.head_seconds);
    std::optional<RequestHead> head;
    std::size_t used = 0;
    try {
      for (;;) {
        head = parse_head(c.buf, opt_.limits, used);
        if (head) break;
        // A shutdown does not wait for a slow head: it is a new request, refused at once.
        const Conn::Read r = c.read_more(head_deadline, idle_wake_);
        if (r == Conn::Read::timeout)
          return refuse(408, "the request head did not arrive within " +
                                 std::to_string(static_cast<int>(opt_.head_seconds)) + " s");
        if (r == Conn::Read::woken)
          return refuse(503, "the server is shutting down", "shutting_down");
        if (r != Conn::Read::data) return;  // closed mid-head: nobody to answer
      }
      c.buf.erase(0, used);
      Request req;
      req.peer = peer;
      // The body, counted as it arrives.
      const auto body_deadline = after(opt_.body_seconds);
      bool continued = false;
      const auto need_more = [&]() -> bool {
        if (head->expect_continue && !continued) {
          continued = true;
          if (!c.write("HTTP/1.1 100 Continue\r\n\r\n")) return false;
        }
        const Conn::Read r = c.read_more(body_deadline);
        if (r == Conn::Read::timeout)
          throw HttpError(408, "the request body did not arrive within " +
                                   std::to_string(static_cast<int>(opt_.body_seconds)) + " s");
        return r == Conn::Read::data;
      };
      if (head->chunked) {
        ChunkedBody chunked(opt_.limits);
        for (;;) {
          c.buf.erase(0, chunked.feed(c.buf, req.body));
          if (chunked.done()) break;
          if (!need_more()) return;
        }
      } else if (const std::size_t n = head->content_length.value_or(0); n > 0) {
        while (c.buf.size() < n)
          if (!need_more()) return;
        req.body = c.buf.substr(0, n);
        c.buf.erase(0, n);
      }
      req.head = std::move(*head);
      // The answer, written in full before the next request is read: pipelined requests are
      // answered in the order they came.
      Response res;
      try {
        handler_(req, res);
      } catch (const std::exception& e) {
        res = Response();
        res.status = 500;
        res.body = error_body_(500, e.what(), "");
      }
      const bool keep = req.head.keep_alive && !draining_.load();
      if (!res.stream) {
        std::string out = head_of(res.status, res.content_type, keep, res.headers) +
                          "Content-Length: " + std::to_string(res.body.size()) + "\r\n\r\n";
        out += res.body;
        if (!c.write(out)) return;
      } else {
        // HTTP/1.0 has no chunks: the stream is the rest of the connection.
        const bool chunks = req.head.minor == 1;
        bool ok = c.write(head_of(res.status, res.content_type, keep && chunks, res.headers) +
                          (chunks ? "Transfer-Encoding: chunked\r\n\r\n" : "\r\n"));
        ChunkSink sink([&](std::string_view d) {
          return ok = ok && c.write(chunks ? chunk(d) : std::string(d));
        });
        while (ok && !sink.is_done()) ok = res.stream(sink) && ok;
        if (ok && chunks) ok = c.write("0\r\n\r\n");
        if (res.stream_end) res.stream_end(ok && sink.is_done());
        if (!ok || !chunks) return;
        if (!keep) return c.linger_close();
        continue;
      }
      if (!keep) return c.linger_close();
    } catch (const HttpError& e) {
      // The framing cannot be trusted after this: answer and close.
      return refuse(e.status(), e.what());
    }
  }
}

}  // namespace baton::serve::http
