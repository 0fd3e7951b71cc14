// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief One HTTP connection's socket as http_server.cpp uses it: non-blocking reads into a
///        buffer that keeps what follows the current request (pipelining), writes and waits
///        with deadlines, and the lingering close after an answer that ends the connection.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace baton::serve::http {

using clock = std::chrono::steady_clock;

inline clock::time_point after(double seconds) {
  return clock::now() +
         std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
}

inline int ms_until(clock::time_point deadline) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
  return ms <= 0 ? 0 : static_cast<int>(std::min<long long>(ms, 1 << 30));
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

}  // namespace baton::serve::http
