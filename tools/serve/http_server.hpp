// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton serve`'s HTTP/1.1 connections: accept, read requests within the limits, hand
///        each to one handler, write its answer (whole, or streamed in chunks), and drain.
///
/// Why not cpp-httplib 0.11 (Debian 12's): it keeps a connection's read buffer inside its
/// socket stream and waits on the socket between requests, so pipelined requests after the
/// first are never read; it bounds neither the number nor the size of header fields, nor a
/// chunked body; it takes the first of two Content-Length fields and reads a non-numeric one as
/// 0; its Expect handling answers 200 to unknown expectations; and one pool thread is held by
/// each kept-alive connection for its whole life (a hundred idle sockets stall /health). Its
/// request processing is private to the compiled library, so none of this can be fixed from
/// outside (docs/serve.md, "Connections").
///
/// The model here: one thread per connection, the connections bounded in number (in all and
/// per client address); a connection waiting for its next request blocks only its own thread,
/// so idle clients never hold back another's request. Every wait has a deadline.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http_parse.hpp"

namespace baton::serve::http {

class Conn;

struct Request {
  RequestHead head;
  std::string body;
  std::string peer;  ///< the client's address
};

/// Where a streamed answer writes: each write is one chunk on the wire.
class ChunkSink {
 public:
  explicit ChunkSink(std::function<bool(std::string_view)> write) : write_(std::move(write)) {}
  /// Writes `data` as one chunk; false when the client is gone (the stream must end).
  bool write(std::string_view data) { return data.empty() || write_(data); }
  /// The answer is complete: the last chunk goes out after this call returns.
  void done() { done_ = true; }
  bool is_done() const { return done_; }

 private:
  std::function<bool(std::string_view)> write_;
  bool done_ = false;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<Header> headers;  ///< more header fields
  /// Set: the body is streamed. Called until it calls sink.done() or returns false (then the
  /// connection is closed without the last chunk: the client sees an incomplete answer).
  std::function<bool(ChunkSink&)> stream;
  /// Called once a stream ended: whole (true), or cut short by the provider or the client.
  std::function<void(bool whole)> stream_end;
};

using Handler = std::function<void(const Request&, Response&)>;
/// The body of an error the HTTP layer answers itself (status, message, a machine-readable code:
/// body_too_large, request_line_too_long, headers_too_large, too_many_connections,
/// shutting_down, or empty).
using ErrorBody = std::function<std::string(int, const std::string&, const std::string&)>;

struct Options {  // NOLINT: aggregate
  Limits limits;
  int max_connections = 1024;        ///< open connections at most (then 503 and close)
  int max_client_connections = 512;  ///< from one client address at most
  double idle_seconds = 10;          ///< a kept-alive connection's wait for its next request
  double head_seconds = 10;          ///< from a request's first byte to the end of its head
  double body_seconds = 60;          ///< from the end of the head to the end of the body
  double write_seconds = 10;         ///< one write's wait for a client that does not read
};

class Server {
 public:
  Server(Options opt, Handler handler, ErrorBody error_body);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds and listens; returns the port (the free one chosen for port 0). io_error when it
  /// cannot.
  int bind(const std::string& host, int port);
  /// Accepts connections until stop(); returns once every connection has closed.
  void run();
  /// Takes in the connections that have already arrived, then closes the listening socket.
  /// Open connections are answered with "Connection: close" from here on.
  void stop_accepting();
  /// Ends run(): connections waiting for a request close now; the others after their answer.
  void stop();
  /// Whether stop_accepting() was called.
  bool draining() const { return draining_.load(); }

 private:
  void accept_ready(bool all);
  void start_connection(int fd, std::string peer);
  /// Serves one connection until it closes.
  void serve(int fd, const std::string& peer);
  /// The connection's next request; nullopt when it closed or went idle past its timeout.
  /// HttpError for a request refused (then the connection is answered and closed).
  std::optional<Request> read_request(Conn& c, const std::string& peer) const;
  /// Writes `res` (streaming it, if it streams); whether the connection may serve another.
  bool write_response(Conn& c, Response& res, bool keep, bool chunks) const;

  Options opt_;
  Handler handler_;
  ErrorBody error_body_;
  int listen_fd_ = -1;
  int accept_wake_ = -1;  ///< eventfd: stop_accepting() was called
  int idle_wake_ = -1;    ///< eventfd: stop() was called (idle connections close)
  std::atomic<bool> draining_{false};
  std::atomic<bool> stopping_{false};

  std::mutex mutex_;  // what follows
  std::condition_variable closed_;
  int open_ = 0;
  std::map<std::string, int> per_client_;
};

}  // namespace baton::serve::http
