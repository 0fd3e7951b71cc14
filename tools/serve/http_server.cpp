// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "http_server.hpp"

#include "http_conn.hpp"

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
      // Out of descriptors: the pending connection stays readable, so without a pause the
      // accept loop would spin; it is taken once a connection has closed.
      if (errno == EMFILE || errno == ENFILE)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return;  // EAGAIN: none left
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

/// How long a connection that is idle when the server stops waits for a request already on its
/// way (answered 503) before it closes.
constexpr double kStopGraceSeconds = 1.0;

std::optional<Request> Server::read_request(Conn& c, const std::string& peer) const {
  // Between requests: wait for the next one's first byte (unless it is buffered already).
  if (c.buf.empty()) {
    Conn::Read r =
        stopping_.load() ? Conn::Read::woken : c.read_more(after(opt_.idle_seconds), idle_wake_);
    // Stopping: a request already sent (still in the kernel's buffer: the connection was taken
    // in at the drain but not read yet) or sent just after the signal gets its 503 rather than
    // a reset from closing a socket with unread bytes; past the grace the connection closes.
    if (r == Conn::Read::woken) r = c.read_more(after(kStopGraceSeconds));
    if (r != Conn::Read::data) return std::nullopt;
  }
  // The head, within head_seconds of its first byte.
  const auto head_deadline = after(opt_.head_seconds);
  std::optional<RequestHead> head;
  std::size_t used = 0;
  while (!(head = parse_head(c.buf, opt_.limits, used))) {
    // A shutdown does not wait for a slow head: it is a new request, refused at once.
    const Conn::Read r = c.read_more(head_deadline, idle_wake_);
    if (r == Conn::Read::timeout)
      throw HttpError(408, "the request head did not arrive within " +
                               std::to_string(static_cast<int>(opt_.head_seconds)) + " s");
    if (r == Conn::Read::woken)
      throw HttpError(503, "the server is shutting down", "shutting_down");
    if (r != Conn::Read::data) return std::nullopt;  // closed mid-head: nobody to answer
  }
  c.buf.erase(0, used);
  // The body, counted as it arrives.
  Request req;
  req.peer = peer;
  const auto body_deadline = after(opt_.body_seconds);
  bool continued = false;
  const auto more = [&]() -> bool {
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
      if (!more()) return std::nullopt;
    }
  } else if (const std::size_t n = head->content_length.value_or(0); n > 0) {
    while (c.buf.size() < n)
      if (!more()) return std::nullopt;
    req.body = c.buf.substr(0, n);
    c.buf.erase(0, n);
  }
  req.head = std::move(*head);
  return req;
}

bool Server::write_response(Conn& c, Response& res, bool keep, bool chunks) const {
  if (!res.stream) {
    std::string out = head_of(res.status, res.content_type, keep, res.headers) +
                      "Content-Length: " + std::to_string(res.body.size()) + "\r\n\r\n";
    out += res.body;
    return c.write(out);
  }
  // HTTP/1.0 has no chunks: the stream is the rest of the connection.
  bool ok = c.write(head_of(res.status, res.content_type, keep && chunks, res.headers) +
                    (chunks ? "Transfer-Encoding: chunked\r\n\r\n" : "\r\n"));
  ChunkSink sink(
      [&](std::string_view d) { return ok = ok && c.write(chunks ? chunk(d) : std::string(d)); });
  while (ok && !sink.is_done()) ok = res.stream(sink) && ok;
  if (ok && chunks) ok = c.write("0\r\n\r\n");
  if (res.stream_end) res.stream_end(ok && sink.is_done());
  return ok && chunks;
}

void Server::serve(int fd, const std::string& peer) {
  Conn c(fd, opt_.write_seconds);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  for (;;) {
    std::optional<Request> req;
    try {
      req = read_request(c, peer);
    } catch (const HttpError& e) {
      // The framing cannot be trusted after this: answer and close.
      const std::string body =
          error_body_(e.status(), e.what(), e.code().empty() ? code_of(e.status()) : e.code());
      (void)c.write(head_of(e.status(), "application/json", false, {}) +
                    "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
      return c.linger_close();
    }
    if (!req) return c.linger_close();  // a FIN, and nothing unread left to turn it into a reset
    // The answer, written in full before the next request is read: pipelined requests are
    // answered in the order they came.
    Response res;
    try {
      handler_(*req, res);
    } catch (const std::exception& e) {
      res = Response();
      res.status = 500;
      res.body = error_body_(500, e.what(), "");
    }
    const bool keep = req->head.keep_alive && !draining_.load();
    if (!write_response(c, res, keep, req->head.minor == 1)) return;
    if (!keep) return c.linger_close();
  }
}

}  // namespace baton::serve::http
