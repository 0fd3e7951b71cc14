// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "relay_requests.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "batched_run.hpp"
#include "baton/io/json_util.hpp"
#include "baton/relay/sampling_json.hpp"
#include "sampling_choice.hpp"

namespace baton::cli {

namespace {

/// One line of a requests file: its ids, and its own sampling options when it has them.
struct RequestLine {
  std::vector<std::int32_t> ids;
  std::optional<SamplingOptions> sampling;
};

/// The requests of a JSONL file, as ids (text encoded with `tok`, as plain text unless
/// `specials`), each with its "sampling" object if any (relay/sampling_json.hpp; it replaces
/// the stages' own, on every stage).
std::vector<RequestLine> read_requests(const std::filesystem::path& file,
                                       const std::optional<Tokenizer>& tok, bool specials,
                                       const std::string& exact_stage) {
  const std::string text = io::read_text_file(file, io::kMaxConfigBytes);
  std::vector<RequestLine> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file.string() + " line " + std::to_string(n);
    const nlohmann::json j = io::parse_json_strict(line, where);
    BATON_CHECK(j.is_object() && (j.contains("ids") != j.contains("text")) &&
                    j.size() == (j.contains("sampling") ? 2u : 1u),
                config_error, where,
                ": expected {\"ids\": [...]} or {\"text\": \"...\"}, with an optional "
                "\"sampling\": {...}");
    std::optional<SamplingOptions> sampling;
    if (j.contains("sampling")) sampling = read_sampling(j["sampling"], where + ": sampling");
    // A line's options reach every stage: an exact one (a verifier) must keep its argmax.
    BATON_CHECK(!sampling || !sampling->alters_choice() || exact_stage.empty(), config_error, where,
                ": its \"sampling\" would alter the choices of stage '", exact_stage,
                "', which is exact (\"exact\": true): a line may only ask for logprobs there");
    if (j.contains("ids")) {
      const auto& ids = j["ids"];
      BATON_CHECK(ids.is_array() && !ids.empty(), config_error, where,
                  ": \"ids\" must be a non-empty array of token ids");
      std::vector<std::int32_t> v;
      for (const auto& x : ids) {
        const auto id = io::non_negative_integer(x);
        BATON_CHECK(id && *id < (1u << 30), config_error, where, ": \"ids\" holds ",
                    io::detail::show(x), ", not a token id");
        v.push_back(static_cast<std::int32_t>(*id));
      }
      out.push_back({std::move(v), sampling});
    } else {
      BATON_CHECK(j["text"].is_string(), config_error, where, ": \"text\" must be a string");
      BATON_CHECK(tok.has_value(), config_error, where,
                  ": a text request needs the relay's tokenizer (field 'tokenizer')");
      const std::string t = j["text"].get<std::string>();
      out.push_back({specials ? tok->encode(t) : tok->encode_ordinary_text(t), sampling});
    }
  }
  BATON_CHECK(!out.empty(), config_error, file.string(), ": no requests");
  return out;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

namespace {

/// Every request through the batch scheduler, `concurrency` in flight (a closed loop: a new one
/// as soon as one finishes). Adds the steps taken and rows run to `steps` / `rows`, and the
/// steps that held only decode rows to `decode` (their rows and time: the decode phase alone,
/// as llama-batched-bench's S_TG counts it).
struct DecodePhase {
  long long rows = 0;
  double seconds = 0;
};
std::vector<RelayResult> run_batched(RuntimeRelay& relay, const std::vector<RequestLine>& requests,
                                     int concurrency, long long& steps, long long& rows,
                                     DecodePhase& decode) {
  return cli::run_batched(
      relay, requests.size(), concurrency,
      [&](BatchedRelay& sched, std::size_t k) {
        RequestOptions o;
        o.own.sampling = requests[k].sampling;
        return sched.submit(requests[k].ids, std::move(o));
      },
      [&](BatchedRelay& sched) {
        const auto t0 = std::chrono::steady_clock::now();
        const SchedulerStep step = sched.step();
        if (step.prefill_rows == 0 && step.decode_rows > 0) {
          decode.rows += step.decode_rows;
          decode.seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
        rows += step.rows;
        ++steps;
      });
}

/// Every request one after another through the relay itself (RuntimeRelay::try_run: no
/// scheduler), each timed from its start.
std::vector<RelayResult> run_sequential(RuntimeRelay& relay,
                                        const std::vector<RequestLine>& requests) {
  std::vector<RelayResult> results;
  for (std::size_t k = 0; k < requests.size(); ++k)
    BATON_CHECK(!requests[k].sampling, usage_error, "request ", k,
                " has its own \"sampling\", which the batch scheduler applies: drop --sequential");
  for (const auto& r : requests) results.push_back(relay.try_run(r.ids));
  return results;
}

}  // namespace

int run_request_file(RuntimeRelay& relay, const std::filesystem::path& file, int concurrency,
                     bool sequential, bool json, const std::optional<Tokenizer>& tok,
                     bool request_specials, const std::string& exact_stage) {
  const auto requests = read_requests(file, tok, request_specials, exact_stage);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  long long steps = 0, rows = 0;
  DecodePhase decode;
  const std::vector<RelayResult> results =
      sequential ? run_sequential(relay, requests)
                 : run_batched(relay, requests, concurrency, steps, rows, decode);
  const double wall_s = std::chrono::duration<double>(clock::now() - t0).count();

  int failed = 0;
  long long generated = 0;
  std::vector<double> latency;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const RelayResult& r = results[k];
    failed += r.verdict == Verdict::error;
    latency.push_back(r.total_ms);
    for (const StageRun& s : r.runs) generated += static_cast<long long>(s.ids.size());
    if (json) {
      nlohmann::json out = {{"request", k},
                            {"verdict", verdict_name(r.verdict)},
                            {"cycles", r.cycles},
                            {"total_ms", r.total_ms},
                            {"prefill_tokens", r.prefill_tokens()},
                            {"stages", nlohmann::json::array()}};
      if (!r.error.empty()) out["error"] = r.error;
      for (const StageRun& s : r.runs) {
        nlohmann::json j = {{"name", s.name}, {"cycle", s.cycle}, {"ids", s.ids}, {"ms", s.ms}};
        if (tok) j["text"] = tok->decode_known(s.ids);
        if (!s.logprobs.empty()) j["logprobs"] = logprobs_json(s.logprobs);
        out["stages"].push_back(std::move(j));
      }
      std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
      std::cout << "request " << k << ": " << verdict_name(r.verdict) << ", cycles " << r.cycles
                << ", " << r.total_ms << " ms";
      if (!r.error.empty()) std::cout << " (" << r.error << ")";
      if (!r.runs.empty()) {
        const StageRun& last = r.runs.back();
        std::cout << "; " << last.name << ":";
        if (tok) {
          std::cout << " " << tok->decode_known(last.ids);
        } else {
          for (const std::int32_t id : last.ids) std::cout << " " << id;
        }
      }
      std::cout << "\n";
    }
  }
  const nlohmann::json summary = {
      {"requests", results.size()},
      {"failed", failed},
      {"concurrency", sequential ? 1 : concurrency},
      {"mode", sequential ? "sequential" : "batched"},
      {"wall_s", wall_s},
      {"requests_per_s", static_cast<double>(results.size()) / wall_s},
      {"generated_tokens", generated},
      {"generated_tokens_per_s", static_cast<double>(generated) / wall_s},
      {"latency_ms_p50", percentile(latency, 0.5)},
      {"latency_ms_p99", percentile(latency, 0.99)},
      {"steps", steps},  // batched only (a sequential run takes no scheduler steps)
      {"mean_rows_per_step", steps ? static_cast<double>(rows) / static_cast<double>(steps) : 0.0},
      // the steps with decode rows only: their generated tokens per second (batched only)
      {"decode_steps_tokens_per_s",
       decode.seconds > 0 ? static_cast<double>(decode.rows) / decode.seconds : 0.0},
      {"backend", relay.backend_name()}};
  if (json) {
    std::cout << nlohmann::json{{"summary", summary}}.dump() << "\n";
  } else {
    std::cout << "summary: " << summary.dump() << "\n";
  }
  return failed ? 1 : 0;
}

}  // namespace baton::cli
