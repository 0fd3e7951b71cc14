// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The API side of `baton serve`: routes, the API key, errors as OpenAI error objects,
///        streamed answers, and the graceful shutdown, over the connections of http_server.hpp.
///        docs/serve.md describes what a client sees.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapter_api.hpp"
#include "http_server.hpp"
#include "metrics.hpp"
#include "openai_api.hpp"
#include "served_relay.hpp"

namespace baton::serve {

struct ServerOptions {  // NOLINT: aggregate
  std::string host = "127.0.0.1";
  int port = 8080;                     ///< 0: any free port (listen() reports it)
  std::optional<std::string> api_key;  ///< Bearer key every /v1 and /metrics request needs
  /// /metrics without the key (--public-metrics): an inference gateway's endpoint picker scrapes
  /// it with no credentials; it tells load and adapter names, never request content.
  bool public_metrics = false;
  double drain_seconds = 30;           ///< how long a shutdown waits for requests in flight
  http::Options http;                  ///< connections and request sizes (limits.body: --max-body)
  /// Relays (by name) whose request text may spell added tokens (<|im_end|>) as themselves;
  /// every other relay encodes request text as plain text.
  std::vector<std::string> request_specials;
};

/// A streamed answer's progress (server.cpp).
struct StreamState;

class Server {
 public:
  Server(std::vector<std::unique_ptr<ServedRelay>> relays, ServerOptions opt);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds the listening socket; returns the port (the one asked for, or the free one chosen
  /// for port 0). io_error when it cannot bind.
  int bind();
  /// Serves until shutdown() has drained the requests in flight.
  void listen();
  /// Stops taking requests (new ones get 503), waits up to drain_seconds for those in flight
  /// to finish, cancels what is left, then ends listen(). Any thread may call it once.
  void shutdown();

 private:
  void handle(const http::Request& req, http::Response& res);
  /// Whether `req` carries the API key (or none is needed).
  bool authorized(const http::Request& req) const;
  void relay_endpoint(const http::Request& req, http::Response& res, Endpoint ep);
  /// Waits for the request's jobs (one per choice) and answers in one response.
  void answer_now(const ApiRequest& r, ServedRelay& relay,
                  const std::vector<std::shared_ptr<Job>>& jobs, int prompt_tokens,
                  http::Response& res, std::chrono::steady_clock::time_point t0);
  /// Answers with Server-Sent Events: each choice's output stage text as it becomes certain (as
  /// it is generated, in a run that cannot be repeated; a run the gate may still reject is held
  /// until the relay ends), then its finish chunk with its baton extension; once every choice
  /// has finished, usage (asked for) and [DONE].
  void answer_streamed(const ApiRequest& r, ServedRelay& relay,
                       std::vector<std::shared_ptr<Job>> jobs, int prompt_tokens,
                       http::Response& res, std::chrono::steady_clock::time_point t0);
  /// The chunks choice `index` of a stream can send now (its finish chunk once its relay ended);
  /// `failed` gets the relay's error when it failed.
  std::string stream_choice(StreamState& st, int index, const ServedRelay& relay,
                            std::string* failed) const;
  /// What a request's "model" names: a relay or model (adapter ""), or one of a served
  /// model's adapters; relay null when nothing is served by that id.
  struct Target {
    ServedRelay* relay = nullptr;
    std::string adapter;
  };
  Target find(const std::string& model) const;
  /// The served model that takes adapters (the one --model with --lora/--max-loras), or null.
  ServedRelay* adapter_host() const;
  /// POST /v1/load_lora_adapter and /v1/unload_lora_adapter (docs/serve.md, "Adapters").
  void load_adapter(const http::Request& req, http::Response& res);
  void unload_adapter(const http::Request& req, http::Response& res);
  std::vector<const ServedRelay*> relay_list() const;
  std::string next_id(Endpoint ep);
  /// The answer of a finished relay: text, finish reason, usage, the baton extension.
  Answer answer_of(const ApiRequest& r, const ServedRelay& relay, const RelayResult& result,
                   int prompt_tokens) const;

  std::vector<std::unique_ptr<ServedRelay>> relays_;
  ServerOptions opt_;
  std::unique_ptr<http::Server> http_;
  Metrics metrics_;
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};  ///< relay requests not yet answered in full
  std::atomic<long long> ids_{0};
  long long started_ = 0;  ///< unix time, for /v1/models' "created"
};

}  // namespace baton::serve
