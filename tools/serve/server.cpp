// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "server.hpp"

#include <algorithm>
#include <ctime>
#include <random>
#include <span>
#include <thread>
#include <utility>

#include "baton/text/relay_text.hpp"
#include "baton/text/utf8.hpp"

namespace baton::serve {

namespace {

/// A seed for a request that gave none: from the OS, so answers differ run to run; the answer
/// reports it (the "baton" extension) so it can be replayed.
std::uint64_t draw_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

using clock = std::chrono::steady_clock;

/// How long a stream waits for news before it writes a comment line: the write is how a
/// client that went away is noticed (its rows and slot are then freed).
constexpr auto kStreamPoll = std::chrono::milliseconds(100);

void send_error(http::Response& res, const ApiError& e) {
  res.status = e.status;
  res.content_type = "application/json";
  res.body = dump(error_body(e));
}

ApiError server_error(int status, std::string message, std::string code = "") {
  ApiError e;
  e.status = status;
  e.type = status == 429 ? "rate_limit_error" : "server_error";
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

/// Whether `given` equals `key`, every byte compared (a NUL included), in time that depends only
/// on the length of `given`, never on where the two differ (the API key).
bool same_secret(std::string_view given, std::string_view key) {
  unsigned diff = given.size() == key.size() ? 0u : 1u;
  for (std::size_t i = 0; i < given.size(); ++i) {
    const unsigned k = i < key.size() ? static_cast<unsigned char>(key[i]) : 0u;
    diff |= static_cast<unsigned char>(given[i]) ^ k;
  }
  return diff == 0;
}

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

/// The output stage's latest run in `r` (none when the relay failed before it ran).
const StageRun* output_run(const RelayResult& r, int stage) {
  for (auto it = r.runs.rbegin(); it != r.runs.rend(); ++it)
    if (it->stage == stage) return &*it;
  return nullptr;
}

}  // namespace

Server::Server(std::vector<std::unique_ptr<ServedRelay>> relays, ServerOptions opt)
    : relays_(std::move(relays)), opt_(std::move(opt)) {
  started_ = static_cast<long long>(std::time(nullptr));
  http_ = std::make_unique<http::Server>(
      opt_.http, [this](const http::Request& req, http::Response& res) { handle(req, res); },
      [](int status, const std::string& message, const std::string& code) {
        ApiError e = server_error(status, message, code);
        if (status < 500) e.type = "invalid_request_error";
        return dump(error_body(e));
      });
}

Server::~Server() {
  http_->stop();
  for (auto& r : relays_) r->stop();
  http_.reset();  // waits for the connections, whose streams end with their cancelled relays
}

int Server::bind() { return http_->bind(opt_.host, opt_.port); }

void Server::listen() { http_->run(); }

void Server::shutdown() {
  if (draining_.exchange(true)) return;
  // From here every answer says "Connection: close", and new requests on open connections get
  // 503; the connections that had already arrived are served, then the socket closes.
  http_->stop_accepting();
  const auto deadline = clock::now() + std::chrono::duration<double>(opt_.drain_seconds);
  while (in_flight_.load() > 0 && clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (in_flight_.load() > 0) {
    // Past the deadline: what is left ends as cancelled (its clients get an error), quickly.
    for (auto& r : relays_) r->cancel_all();
    const auto grace = clock::now() + std::chrono::seconds(5);
    while (in_flight_.load() > 0 && clock::now() < grace)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  http_->stop();
}

Server::Target Server::find(const std::string& model) const {
  for (const auto& r : relays_)
    if (r->name() == model) return {r.get(), ""};
  for (const auto& r : relays_)
    if (r->adapters() && r->adapters()->contains(model)) return {r.get(), model};
  return {};
}

ServedRelay* Server::adapter_host() const {
  for (const auto& r : relays_)
    if (r->adapters()) return r.get();
  return nullptr;
}

void Server::load_adapter(const http::Request& req, http::Response& res) {
  try {
    const LoadAdapterRequest a = parse_load_adapter(req.body);
    ServedRelay* host = adapter_host();
    if (!host)
      throw ApiError{400, "invalid_request_error",
                     "this server serves no adapters: start it with --model DIR and --lora "
                     "NAME=DIR or --max-loras N",
                     "lora_name", ""};
    if (find(a.name).relay)
      throw ApiError{400, "invalid_request_error",
                     "a model is already served as '" + a.name +
                         "': unload it first, or load this one under another name",
                     "lora_name", "adapter_exists"};
    try {
      host->adapters()->add(a.name, a.path);
    } catch (const usage_error& e) {  // loaded under that name meanwhile
      throw ApiError{400, "invalid_request_error", e.what(), "lora_name", "adapter_exists"};
    } catch (const capacity_error& e) {
      throw ApiError{400, "invalid_request_error", e.what(), "lora_name", "too_many_adapters"};
    } catch (const error& e) {
      // A missing folder, a bad config field, a rank over the bound, a target the model lacks:
      // the loader's message names the file and the field; nothing was registered.
      throw ApiError{400, "invalid_request_error", e.what(), "lora_path", "invalid_adapter"};
    }
    const AdapterSnapshot snap = host->adapters()->snapshot();
    for (const AdapterSnapshot::Entry& e : snap.adapters)
      if (e.name == a.name)
        res.body =
            dump({{"object", "lora_adapter"},
                  {"id", a.name},
                  {"status", "loaded"},
                  {"sha256", e.sha256},
                  {"message", "Success: LoRA adapter '" + a.name + "' added successfully."}});
  } catch (const ApiError& e) {
    send_error(res, e);
  }
}

void Server::unload_adapter(const http::Request& req, http::Response& res) {
  try {
    const std::string name = parse_unload_adapter(req.body);
    ServedRelay* host = adapter_host();
    if (!host || !host->adapters()->contains(name))
      throw ApiError{404, "invalid_request_error",
                     "no adapter is served as '" + name + "': GET /v1/models lists them",
                     "lora_name", "model_not_found"};
    bool removed = false;
    try {
      removed = host->adapters()->remove(name);
    } catch (const usage_error&) {  // unloaded by another request meanwhile
      throw ApiError{404, "invalid_request_error", "no adapter is served as '" + name + "'",
                     "lora_name", "model_not_found"};
    }
    // Refused, not waited for: requests in flight finish on the weights they started with, and
    // the caller decides whether to retry (a drain before an unload makes it succeed).
    if (!removed)
      throw ApiError{
          409, "invalid_request_error",
          "adapter '" + name + "' has requests in flight; unload it once they have finished",
          "lora_name", "adapter_in_use"};
    res.body = dump({{"object", "lora_adapter"},
                     {"id", name},
                     {"status", "unloaded"},
                     {"message", "Success: LoRA adapter '" + name + "' removed successfully."}});
  } catch (const ApiError& e) {
    send_error(res, e);
  }
}

std::vector<const ServedRelay*> Server::relay_list() const {
  std::vector<const ServedRelay*> v;
  for (const auto& r : relays_) v.push_back(r.get());
  return v;
}

std::string Server::next_id(Endpoint ep) {
  return std::string(ep == Endpoint::chat ? "chatcmpl-" : "cmpl-") + "baton-" +
         std::to_string(++ids_);
}

bool Server::authorized(const http::Request& req) const {
  if (!opt_.api_key) return true;
  const std::string* auth = req.head.header("authorization");
  const std::string_view bearer = "Bearer ";
  return auth && auth->size() > bearer.size() && auth->starts_with(bearer) &&
         same_secret(std::string_view(*auth).substr(bearer.size()), *opt_.api_key);
}

void Server::handle(const http::Request& req, http::Response& res) {
  const std::string& path = req.head.path;
  const std::string& method = req.head.method;
  if (method == "GET" && path == "/health") {
    // Needs no key: a load balancer's probe carries none.
    const bool ok = !draining_.load();
    res.status = ok ? 200 : 503;
    res.body = dump({{"status", ok ? "ok" : "draining"}, {"relays", relays_.size()}});
    return;
  }
  if (method == "GET" && path == "/metrics" && opt_.public_metrics) {
    res.content_type = "text/plain; version=0.0.4";
    res.body = metrics_.render(relay_list());
    return;
  }
  if (!authorized(req)) {
    ApiError e;
    e.status = 401;
    e.message = req.head.header("authorization") ? "the API key is not valid"
                                                 : "no API key: send 'Authorization: Bearer <key>'";
    e.code = "invalid_api_key";
    return send_error(res, e);
  }
  if (method == "POST" && path == "/v1/chat/completions")
    return relay_endpoint(req, res, Endpoint::chat);
  if (method == "POST" && path == "/v1/completions")
    return relay_endpoint(req, res, Endpoint::completion);
  if (method == "POST" && path == "/v1/load_lora_adapter") return load_adapter(req, res);
  if (method == "POST" && path == "/v1/unload_lora_adapter") return unload_adapter(req, res);
  if (method == "GET" && path == "/v1/models") {
    nlohmann::json data = nlohmann::json::array();
    for (const auto& r : relays_) {
      data.push_back({{"id", r->name()},
                      {"object", "model"},
                      {"created", started_},
                      {"owned_by", "baton"},
                      {"baton", r->describe()}});
      if (r->adapters())
        for (const AdapterSnapshot::Entry& a : r->adapters()->snapshot().adapters)
          data.push_back(adapter_model_entry(a, r->name(), started_));
    }
    res.body = dump({{"object", "list"}, {"data", data}});
    return;
  }
  if (method == "GET" && path == "/metrics") {
    res.content_type = "text/plain; version=0.0.4";
    res.body = metrics_.render(relay_list());
    return;
  }
  ApiError e;
  e.status = 404;
  e.message = "no endpoint " + method + " " + detail::excerpt(path);
  e.code = "unknown_url";
  send_error(res, e);
}

Answer Server::answer_of(const ApiRequest& r, const ServedRelay& relay, const RelayResult& result,
                         int prompt_tokens) const {
  Answer a;
  a.prompt_tokens = prompt_tokens;
  const std::optional<Tokenizer>& tok = relay.tokenizer();
  const auto text = [&](const std::vector<std::int32_t>& ids) {
    return tok ? tok->decode_known(ids) : std::string();
  };
  nlohmann::json stages = nlohmann::json::array();
  long long generated = 0;
  for (const StageRun& s : result.runs) {
    generated += static_cast<long long>(s.ids.size());
    nlohmann::json j = {{"name", s.name},         {"cycle", s.cycle},
                        {"tokens", s.ids.size()}, {"input_tokens", s.input_tokens},
                        {"stopped", s.stopped},   {"ms", s.ms}};
    if (tok) {
      j["text"] = text(s.ids);
    } else {
      j["ids"] = s.ids;
    }
    stages.push_back(std::move(j));
  }
  if (const StageRun* out = output_run(result, relay.output_stage())) {
    a.text = text(out->ids);
    a.completion_tokens = static_cast<int>(out->ids.size());
    a.finish_reason = out->stopped ? "stop" : "length";
    bool found = false;
    a.text.resize(cut_at_stop(a.text, r.stop, true, &found));
    if (found) a.finish_reason = "stop";
    if (!out->logprobs.empty()) {
      double sum = 0.0;
      for (const TokenLogprobs& t : out->logprobs) sum += t.logprob;
      a.mean_logprob = sum / static_cast<double>(out->logprobs.size());
    }
    if (r.sampling && r.sampling->logprobs)
      a.logprobs = logprobs_body(r.endpoint, out->logprobs, [&](std::int32_t id) {
        return text(std::vector<std::int32_t>{id});
      });
  } else {
    a.finish_reason = "stop";
  }
  a.baton = {
      {"verdict", verdict_name(result.verdict)},
      {"cycles", result.cycles},
      {"total_ms", result.total_ms},
      {"output_stage", relay.spec().stages[static_cast<std::size_t>(relay.output_stage())].name},
      {"generated_tokens", generated},
      {"stages", std::move(stages)}};
  // The seed the output stage sampled with (drawn when the request gave none): sending it back
  // as "seed" replays the answer.
  if (r.sampling) a.baton["seed"] = r.sampling->seed;
  return a;
}

void Server::relay_endpoint(const http::Request& req, http::Response& res, Endpoint ep) {
  const auto t0 = clock::now();
  ++in_flight_;
  // Decremented when the answer is complete: here, or by a stream's end.
  struct Leave {
    std::atomic<int>* n;
    ~Leave() {
      if (n) --*n;
    }
  } leave{&in_flight_};
  std::string model;
  try {
    if (draining_.load())
      throw server_error(503, "the server is shutting down; retry on another instance",
                         "shutting_down");
    ApiRequest r = parse_request(req.body, ep);
    if (r.sampling && !r.seeded) r.sampling->seed = draw_seed();
    const Target target = find(r.model);
    ServedRelay* relay = target.relay;
    if (!relay) {
      ApiError e;
      e.status = 404;
      e.param = "model";
      e.code = "model_not_found";
      e.message = "the model '" + detail::excerpt(r.model) +
                  "' does not exist: GET /v1/models lists the models served";
      throw e;
    }
    model = r.model;
    const char* prompt_field = ep == Endpoint::chat ? "messages" : "prompt";
    const std::vector<std::int32_t> ids = relay->prompt_ids(r);
    const auto bad_prompt = [&](std::string message, std::string code = "") {
      ApiError e;
      e.param = prompt_field;
      e.message = std::move(message);
      e.code = std::move(code);
      return e;
    };
    if (ids.empty()) throw bad_prompt("the request is empty");
    const int cap = relay->spec().max_request_tokens;
    if (static_cast<long long>(ids.size()) > cap)
      throw bad_prompt("the request is " + std::to_string(ids.size()) + " tokens; " +
                           relay->label() + " takes at most " + std::to_string(cap) + " (" +
                           relay->prompt_limit_source() + ")",
                       "context_length_exceeded");
    const int vocab = relay->relay().config().vocab_size;
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (ids[k] >= vocab)
        throw bad_prompt("token id " + std::to_string(ids[k]) + " at index " + std::to_string(k) +
                         " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    if (r.sampling) {
      // The vocabulary bounds logit_bias's ids; an exact output stage (a verifier) chooses by
      // argmax only.
      const StageSpec& out = relay->spec().stages[static_cast<std::size_t>(relay->output_stage())];
      for (const kernels::BiasEntry& b : r.sampling->logit_bias)
        if (b.id >= vocab)
          throw ApiError{400, "invalid_request_error",
                         "'logit_bias' names token " + std::to_string(b.id) +
                             ", outside the vocabulary [0, " + std::to_string(vocab) + ")",
                         "logit_bias", ""};
      if (out.exact && r.sampling->alters_choice())
        throw ApiError{400, "invalid_request_error",
                       "relay '" + model + "' answers from stage '" + out.name +
                           "', which is exact (chooses by argmax): no temperature, "
                           "logit_bias or penalties",
                       "temperature", ""};
    }
    // best_of: that many candidates, run as n choices are; the n most likely are returned.
    const int candidates = std::max(r.n, r.best_of);
    const char* count_field = r.best_of > r.n ? "best_of" : "n";
    if (candidates > relay->limits().concurrency)
      throw ApiError{400, "invalid_request_error",
                     std::string("'") + count_field + "' is " + std::to_string(candidates) + "; " +
                         relay->label() + " runs at most " +
                         std::to_string(relay->limits().concurrency) +
                         " choices at once (its --concurrency)",
                     count_field, ""};
    std::optional<SamplingOptions> sampling = r.sampling;
    if (r.best_of > r.n) {  // ranking needs every candidate's log-probabilities
      if (!sampling)        // the output stage's own options, as without best_of
        sampling = relay->spec().stages[static_cast<std::size_t>(relay->output_stage())].sampling;
      sampling->logprobs = true;
    }
    // Stop strings match the generated bytes, which need the relay's tokenizer.
    if (!r.stop.empty() && !relay->tokenizer())
      throw ApiError{400, "invalid_request_error",
                     relay->label() + " has no tokenizer, so it cannot match 'stop' strings",
                     "stop", ""};
    std::vector<std::shared_ptr<Job>> jobs;
    try {
      jobs = relay->submit(ids,
                           {.max_new = std::min(r.max_tokens, relay->output_max_new()),
                            .sampling = sampling,
                            .stop = r.stop},
                           target.adapter, candidates);
    } catch (const capacity_error& e) {
      throw draining_.load()
          ? server_error(503, e.what(), "shutting_down")
          : server_error(429,
                         relay->label() + " has " + std::to_string(relay->limits().queue) +
                             " requests in flight (its queue is full); retry "
                             "later",
                         "queue_full");
    }
    if (r.stream) {
      leave.n = nullptr;  // the stream's end decrements in_flight_
      answer_streamed(r, *relay, std::move(jobs), static_cast<int>(ids.size()), res, t0);
      metrics_.request(model, 200);
      return;
    }
    answer_now(r, *relay, jobs, static_cast<int>(ids.size()), res, t0);
  } catch (const ApiError& e) {
    send_error(res, e);
  } catch (const std::exception& e) {
    // A baton::error past the checks above, or out of memory: the server's fault, said so.
    send_error(res, server_error(500, e.what()));
  }
  metrics_.request(model, res.status);
}

void Server::answer_now(const ApiRequest& r, ServedRelay& relay,
                        const std::vector<std::shared_ptr<Job>>& jobs, int prompt_tokens,
                        http::Response& res, clock::time_point t0) {
  std::vector<Answer> answers;
  std::string failed;
  for (const auto& job : jobs) {
    RelayResult result;
    {
      std::unique_lock lock(job->mutex);
      job->changed.wait(lock, [&] { return job->result.has_value(); });
      result = std::move(*job->result);
    }
    if (result.verdict == Verdict::error && failed.empty()) failed = result.error;
    if (failed.empty()) answers.push_back(answer_of(r, relay, result, prompt_tokens));
  }
  if (!failed.empty()) throw server_error(500, relay.label() + " failed: " + failed, "relay_error");
  long long completion = 0, generated = 0;
  for (const Answer& a : answers) {
    completion += a.completion_tokens;
    generated += a.baton["generated_tokens"].get<long long>();
  }
  if (static_cast<int>(answers.size()) > r.n) {
    // best_of: the n candidates with the highest mean log-probability per token (OpenAI's
    // "best"), the earlier candidate on a tie; each says which candidate it was (replayable
    // alone on its streams, docs/serve.md).
    for (std::size_t i = 0; i < answers.size(); ++i)
      answers[i].baton["candidate"] = static_cast<long long>(i);
    std::stable_sort(answers.begin(), answers.end(), [](const Answer& a, const Answer& b) {
      return a.mean_logprob > b.mean_logprob;
    });
    answers.resize(static_cast<std::size_t>(r.n));
  }
  res.body = dump(
      response_body(r, next_id(r.endpoint), static_cast<long long>(std::time(nullptr)), answers));
  metrics_.finished(r.model, seconds_since(t0), -1, prompt_tokens, completion, generated);
}

/// One choice's progress in a stream: what it has sent of its answer.
struct ChoiceStream {
  std::shared_ptr<Job> job;
  std::string sent;          ///< answer text sent so far
  bool finished = false;     ///< its finish chunk is out
  std::uint64_t seen = 0;    ///< the job's version last looked at
  std::size_t sent_ids = 0;  ///< answer ids sent so far (a relay without a tokenizer)
  std::size_t sent_lp = 0;   ///< logprobs entries sent so far
  std::size_t lp_bytes = 0;  ///< the text those entries spell (the next one's text_offset)
  Answer answer;             ///< once finished
};

/// A stream's progress: its choices' (one, unless the request asked for n).
struct StreamState {
  ApiRequest request;
  std::string id;
  long long created = 0;
  int prompt_tokens = 0;
  clock::time_point t0;
  std::vector<ChoiceStream> choices;
  bool began = false;      ///< the first chunks (the chat role) are out
  bool finished = false;   ///< [DONE] is out
  double ttft = -1;        ///< seconds to the first answer text sent
  clock::time_point news;  ///< when a job last changed (a comment line follows kStreamPoll of none)
};

namespace {

std::string sse(const nlohmann::json& j) { return "data: " + dump(j) + "\n\n"; }

/// Whether any unfinished choice's job changed since it was last looked at; waits up to `wait`
/// on the first unfinished one for it.
bool stream_news(StreamState& st, std::chrono::milliseconds wait) {
  const auto changed = [&] {
    for (ChoiceStream& c : st.choices) {
      if (c.finished) continue;
      const std::lock_guard lock(c.job->mutex);
      if (c.job->version != c.seen) return true;
    }
    return false;
  };
  if (changed()) return true;
  for (ChoiceStream& c : st.choices) {
    if (c.finished) continue;
    std::unique_lock lock(c.job->mutex);
    c.job->changed.wait_for(lock, wait, [&] { return c.job->version != c.seen; });
    break;
  }
  return changed();
}

}  // namespace

void Server::answer_streamed(const ApiRequest& r, ServedRelay& relay,
                             std::vector<std::shared_ptr<Job>> jobs, int prompt_tokens,
                             http::Response& res, clock::time_point t0) {
  auto st = std::make_shared<StreamState>();
  st->request = r;
  st->id = next_id(r.endpoint);
  st->created = static_cast<long long>(std::time(nullptr));
  st->prompt_tokens = prompt_tokens;
  st->t0 = t0;
  st->news = clock::now();
  for (auto& job : jobs) st->choices.push_back(ChoiceStream{.job = std::move(job)});
  res.headers.push_back({"Cache-Control", "no-cache"});
  res.content_type = "text/event-stream";
  res.stream = [this, st, &relay](http::ChunkSink& sink) {
    std::string out;
    const bool first = !st->began;
    if (first) {
      st->began = true;
      if (st->request.endpoint == Endpoint::chat) {
        for (std::size_t i = 0; i < st->choices.size(); ++i) {
          nlohmann::json c =
              chunk_body(st->request, st->id, st->created, "", nullptr, static_cast<int>(i));
          c["choices"][0]["delta"] = {{"role", "assistant"}, {"content", ""}};
          out += sse(c);
        }
      }
    }
    // One choice's stream waits on its job; several poll theirs in turn.
    const bool news =
        first ||
        stream_news(*st, st->choices.size() == 1 ? kStreamPoll : std::chrono::milliseconds(10));
    if (news) st->news = clock::now();
    const bool idle = !news && clock::now() - st->news >= kStreamPoll;
    std::string failed;
    for (std::size_t i = 0; i < st->choices.size() && failed.empty(); ++i)
      if (!st->choices[i].finished) out += stream_choice(*st, static_cast<int>(i), relay, &failed);
    if (!failed.empty()) {
      out +=
          sse(error_body(server_error(500, relay.label() + " failed: " + failed, "relay_error")));
      out += "data: [DONE]\n\n";
      st->finished = true;
    } else if (std::all_of(st->choices.begin(), st->choices.end(),
                           [](const ChoiceStream& c) { return c.finished; })) {
      std::vector<Answer> answers;
      for (const ChoiceStream& c : st->choices) answers.push_back(c.answer);
      if (st->request.include_usage) {
        nlohmann::json u = chunk_body(st->request, st->id, st->created, "");
        u["choices"] = nlohmann::json::array();
        u["usage"] = usage_body(answers);
        out += sse(u);
      }
      long long completion = 0, generated = 0;
      for (const Answer& a : answers) {
        completion += a.completion_tokens;
        generated += a.baton["generated_tokens"].get<long long>();
      }
      metrics_.finished(st->request.model, seconds_since(st->t0), st->ttft, st->prompt_tokens,
                        completion, generated);
      out += "data: [DONE]\n\n";
      st->finished = true;
    }
    // Nothing new for a while: a comment line, which clients ignore; writing it is how a
    // client that went away is noticed. (Other news, such as a run the gate may still
    // reject, sends nothing.)
    if (out.empty() && !idle) return true;
    if (out.empty()) out = ": waiting\n\n";
    if (!sink.write(out)) return false;
    if (st->finished) sink.done();
    return true;
  };
  res.stream_end = [this, st, &relay](bool) {
    // The stream ended: whole, or because the client went away (then its rows and slots
    // are freed at the next step).
    if (!st->finished) {
      for (const ChoiceStream& c : st->choices) relay.cancel(c.job);
      metrics_.disconnected(st->request.model);
    }
    --in_flight_;
  };
}

std::string Server::stream_choice(StreamState& st, int index, const ServedRelay& relay,
                                  std::string* failed) const {
  ChoiceStream& ch = st.choices[static_cast<std::size_t>(index)];
  std::string out;
  // What may be sent now: the answer's text so far, as far as it is certain.
  std::optional<RelayResult> result;
  std::string text;
  std::vector<std::int32_t> ids;   // the same, for a relay without a tokenizer
  std::vector<TokenLogprobs> lps;  // the answer's logprobs entries so far, when asked for
  const bool want_lp =
      st.request.sampling && st.request.sampling->logprobs && relay.tokenizer().has_value();
  {
    const std::lock_guard lock(ch.job->mutex);
    Job& j = *ch.job;
    ch.seen = j.version;
    const std::optional<Tokenizer>& tok = relay.tokenizer();
    if (j.result) {
      result = std::move(j.result);
    } else if (j.output_final && tok) {
      if (want_lp) lps = j.output_logprobs;
      // A run that cannot be repeated: its ids so far, less an unfinished character. With
      // logprobs, only the ids whose entries are in (a token's id and its entry arrive in two
      // callbacks), so every text sent has its entries with it.
      std::span<const std::int32_t> so_far = j.output;
      if (want_lp && so_far.size() > lps.size()) so_far = so_far.first(lps.size());
      text = j.output_ended ? tok->decode_known(*j.output_ended) : tok->decode_known(so_far);
      if (!j.output_ended) text.resize(text::complete_utf8_prefix(text));
      text.resize(cut_at_stop(text, st.request.stop, j.output_ended.has_value()));
    } else if (j.output_final) {
      ids = j.output_ended ? *j.output_ended : j.output;
    }
  }
  if (result && result->verdict == Verdict::error) {
    *failed = result->error;
    ch.finished = true;
    return out;
  }
  if (result && !relay.tokenizer()) {
    const StageRun* out_run = output_run(*result, relay.output_stage());
    if (out_run) ids = out_run->ids;
  }
  // A relay without a tokenizer streams its answer's ids (in the extension), text empty.
  if (ids.size() > ch.sent_ids && ids.size() > 0) {
    nlohmann::json c = chunk_body(st.request, st.id, st.created, "", nullptr, index);
    c["baton"] = {{"ids", std::vector<std::int32_t>(
                              ids.begin() + static_cast<std::ptrdiff_t>(ch.sent_ids), ids.end())}};
    out += sse(c);
    ch.sent_ids = ids.size();
    if (st.ttft < 0) st.ttft = seconds_since(st.t0);
  }
  if (result) {
    ch.answer = answer_of(st.request, relay, *result, st.prompt_tokens);
    text = ch.answer.text;
    if (const StageRun* out_run = output_run(*result, relay.output_stage()))
      lps = out_run->logprobs;
  }
  // The logprobs entries whose token's text lies wholly within `upto` bytes of the answer
  // (all of them at the end), not sent yet, as the chunk's "logprobs".
  const auto take_lp = [&](std::size_t upto, bool all) -> nlohmann::json {
    const auto spell = [&](std::int32_t id) {
      return relay.tokenizer()->decode_known(std::vector<std::int32_t>{id});
    };
    const std::size_t from = ch.sent_lp, offset = ch.lp_bytes;
    while (ch.sent_lp < lps.size()) {
      const std::size_t n = spell(lps[ch.sent_lp].id).size();
      if (!all && ch.lp_bytes + n > upto) break;
      ch.lp_bytes += n;
      ++ch.sent_lp;
    }
    return logprobs_body(st.request.endpoint,
                         std::span<const TokenLogprobs>(lps).subspan(from, ch.sent_lp - from),
                         spell, offset);
  };
  // Only text that extends what was sent goes out (a stream cannot take text back).
  if (text.size() > ch.sent.size() && text.starts_with(ch.sent)) {
    nlohmann::json c =
        chunk_body(st.request, st.id, st.created, text.substr(ch.sent.size()), nullptr, index);
    if (want_lp) c["choices"][0]["logprobs"] = take_lp(text.size(), false);
    out += sse(c);
    ch.sent = text;
    if (st.ttft < 0) st.ttft = seconds_since(st.t0);
  }
  if (result) {
    const Answer& a = ch.answer;
    nlohmann::json last = chunk_body(st.request, st.id, st.created, "", &a.finish_reason, index);
    // Entries not sent with text yet (tokens that spell nothing, or past a stop string).
    if (want_lp && ch.sent_lp < lps.size()) last["choices"][0]["logprobs"] = take_lp(0, true);
    last["baton"] = a.baton;
    out += sse(last);
    ch.finished = true;
  }
  return out;
}

}  // namespace baton::serve
