// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton relay`: run a relay described by a JSON file (docs/relay.md has the format).
///
///   baton relay --config FILE (--ids 1,2,3 | "question") [--json] [--repeat N] [--trace]
///               [--backend host|cuda] [--threads N]
///               [--bf16-products | --f32-products]
///   baton relay --config FILE --requests FILE.jsonl [--concurrency N | --sequential] [--json]
///
/// The request is token ids, or text encoded with the relay's tokenizer (no BOS added) as plain
/// text: an added token written in it (<|im_end|>) is spelled byte by byte, never the control
/// token, unless --request-specials says the request may carry them.
/// Output: each stage run (cycle, name, ids, and text when a tokenizer is configured), the
/// verdict, cycles and timings in ms; with --json one object (text fields replace invalid UTF-8
/// with U+FFFD; ids are exact). --repeat N runs the request N times on the pre-warmed relay and
/// reports the median total. --trace gives every stage a trace recorder (where its card allows
/// a host interceptor) and prints each stage run's per-step table (or "trace" arrays in JSON).
/// The backend that ran is the JSON's "backend" and the end of the plain verdict line. The
/// relay file's "backend" field chooses it when --backend is not given; --backend overrides
/// the file (cli::resolve_relay_backend). --threads and --bf16-products override the file's
/// "host" field (the host relay's HostContext). --requests runs every request of a JSONL file
/// through the batch scheduler, N at a time (relay_requests.hpp).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "backend_choice.hpp"
#include "baton/relay/runtime_relay_instances.hpp"  // compiled once, in dispatch/
#include "baton/text/relay_text.hpp"
#include "commands.hpp"
#include "host_choice.hpp"
#include "relay_requests.hpp"
#include "relay_setup.hpp"
#include "sampling_choice.hpp"
#include "storage_choice.hpp"

namespace relay_command {

using namespace baton;

/// --repeat at most: a timing's median needs tens of runs, not a billion (each is a whole relay).
constexpr int kMaxRepeat = 1000;
/// --concurrency at most (each stage gets that many slots of KV cache).
constexpr int kMaxConcurrency = 1024;

constexpr std::string_view kUsage =
    "usage: baton relay --config FILE (--ids 1,2,3 | \"question\") [--json] [--repeat N] "
    "[--trace]\n"
    "                   [--backend host|cuda] [--threads N]\n"
    "                   [--bf16-products | --f32-products]\n"
    "                   [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--seed N] ...\n"
    "       baton relay --config FILE --requests FILE.jsonl [--concurrency N | --sequential] "
    "[--json]\n"
    "  --config FILE  relay description (JSON; see docs/relay.md)\n"
    "  --ids LIST     the request as token ids, used as given\n"
    "  \"question\"     the request as text (needs the relay's tokenizer)\n"
    "  --json         print one JSON object\n"
    "  --repeat N     run N <= 1000 times on the pre-warmed relay; report the median total ms\n"
    "  --trace        record every decode step (token, position, time) and print the table\n"
    "  --requests F   many requests, one JSON object per line ({\"ids\": [..]} or {\"text\": "
    "\"..\"}),\n"
    "                 batched: one result line each, then a summary (docs/batching.md);\n"
    "                 a line's own \"sampling\": {...} replaces the stages' (docs/sampling.md)\n"
    "  --concurrency N  requests in flight with --requests (slots per stage; default 1)\n"
    "  --sequential   with --requests: one request after another through the relay itself\n"
    "                 (no batching; the baseline)\n"
    "  --request-specials  request text may spell added tokens (<|im_end|>) as those tokens\n"
    "                 (default: request text is plain text, as untrusted input must be)\n"
    "  The sampling options below apply to every stage over its file's \"sampling\" (an\n"
    "  \"exact\" stage takes only --seed and --logprobs):\n";

struct Args {
  std::string config;
  std::optional<std::vector<std::int32_t>> ids;
  std::optional<std::string> text;
  bool json = false, help = false, trace = false;
  bool request_specials = false;  ///< --request-specials: added tokens in request text match
  int repeat = 1;
  std::optional<std::string> requests;  ///< --requests FILE.jsonl
  int concurrency = 1;
  bool sequential = false;                    ///< --sequential: --requests without the scheduler
  std::optional<cli::BackendChoice> backend;  ///< --backend; unset: the build's default
  cli::HostChoice host;                       ///< --threads, --bf16-products
  std::optional<Storage> storage;             ///< --storage; unset: the relay file's
  cli::SamplingChoice sampling;               ///< --temperature, --seed, ... over the file's
};

Args parse_args(int argc, char** argv) {
  Args a;
  cli::SeenOptions seen;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("-")) seen.once(arg);
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw cli::ArgError{std::string(arg) + " needs a value"};
      return cli::non_empty(arg, argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--config") {
      a.config = value();
    } else if (arg == "--ids") {
      a.ids = cli::parse_ids(value());
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--trace") {
      a.trace = true;
    } else if (arg == "--request-specials") {
      a.request_specials = true;
    } else if (arg == "--repeat") {
      a.repeat = cli::parse_int<int>(value(), "--repeat");
    } else if (arg == "--requests") {
      a.requests = std::string(value());
    } else if (arg == "--sequential") {
      a.sequential = true;
    } else if (arg == "--concurrency") {
      a.concurrency = cli::parse_int<int>(value(), "--concurrency");
    } else if (arg == "--backend") {
      a.backend = cli::parse_backend(value());
    } else if (cli::parse_host_option(arg, value, a.host)) {
    } else if (cli::parse_storage_option(arg, value, a.storage)) {
    } else if (cli::parse_sampling_option(arg, value, a.sampling)) {
    } else if (arg.starts_with("--")) {
      throw cli::ArgError{"unknown option '" + detail::excerpt(arg) + "'"};
    } else {
      if (a.text) throw cli::ArgError{"more than one question given"};
      a.text = std::string(arg);
    }
  }
  if (a.help) return a;
  if (a.config.empty()) throw cli::ArgError{"--config FILE is required"};
  if (a.sampling.options.logprobs && !a.json) throw cli::ArgError{"--logprobs needs --json"};
  cli::finish_sampling_choice(a.sampling);
  if (a.requests) {
    if (a.ids || a.text) throw cli::ArgError{"--requests replaces --ids and the question"};
    if (a.repeat != 1 || a.trace)
      throw cli::ArgError{"--repeat and --trace apply to one request, not to --requests"};
    if (a.concurrency < 1 || a.concurrency > kMaxConcurrency)
      throw cli::ArgError{"--concurrency " + std::to_string(a.concurrency) + " is outside [1, " +
                          std::to_string(kMaxConcurrency) + "]"};
    if (a.sequential && a.concurrency != 1)
      throw cli::ArgError{"--sequential runs one request at a time; drop --concurrency"};
    return a;
  }
  if (a.sequential) throw cli::ArgError{"--sequential applies to --requests"};
  if (a.concurrency != 1) throw cli::ArgError{"--concurrency applies to --requests"};
  if (a.ids.has_value() == a.text.has_value())
    throw cli::ArgError{"give the request either as --ids or as one \"question\""};
  if (a.repeat < 1 || a.repeat > kMaxRepeat)
    throw cli::ArgError{"--repeat " + std::to_string(a.repeat) + " is outside [1, " +
                        std::to_string(kMaxRepeat) + "]"};
  return a;
}

/// Adds the trace recorder to every stage that has none and accepts host interceptors.
void add_tracing(RelaySpec& spec) {
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    StageSpec& st = spec.stages[i];
    if (st.graph_captured) continue;  // a graph-captured loop takes no host interceptor
    const bool has = std::any_of(
        st.interceptors.begin(), st.interceptors.end(),
        [](const InterceptorSpec& x) { return x.kind == InterceptorSpec::Kind::trace; });
    if (has) continue;
    InterceptorSpec t;
    t.kind = InterceptorSpec::Kind::trace;
    t.where =
        spec.source.string() + ": stages[" + std::to_string(i) + "] ('" + st.name + "') (--trace)";
    st.interceptors.push_back(std::move(t));
  }
}

/// The per-step table of one stage run.
void print_trace(const StageRun& s, const std::optional<Tokenizer>& tok) {
  std::printf("  %5s %6s %7s %4s %10s %9s%s\n", "step", "pos", "token", "skip", "start_ms",
              "step_ms", tok ? "  text" : "");
  for (const TraceRow& row : s.trace) {
    std::printf("  %5d %6d %7d %4s %10.3f %9.3f", row.step, row.position, row.token,
                row.skipped ? "yes" : "-", row.start_ms, row.step_ms);
    if (tok) {
      const nlohmann::json text = tok->decode_known(std::vector<std::int32_t>{row.token});
      std::printf("  %s",
                  text.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    }
    std::printf("\n");
  }
  std::printf("  (%d forwards, %d skipped, %d host waits)\n", s.forwards, s.skipped, s.host_waits);
}

}  // namespace relay_command

int cmd_relay(int argc, char** argv) {
  using namespace relay_command;
  Args a;
  try {
    a = parse_args(argc, argv);
  } catch (const cli::ArgError& e) {
    // The error and where the options are, not the whole option list: a mistyped flag should
    // not bury its message under a page of usage.
    std::cerr << "baton relay: " << e.message << "\n"
              << "(baton relay --help lists the options)\n";
    return 2;
  }
  if (a.help) {
    std::cout << kUsage << cli::kSamplingUsage << cli::backend_usage() << cli::host_usage()
              << cli::storage_usage();
    return 0;
  }
  if (a.backend) (void)cli::resolve_backend(a.backend);  // before anything is loaded
  RelaySpec spec = load_relay_spec(a.config);
  // --backend overrides the file's "backend"; the spec then names what runs (backend_choice.hpp).
  const cli::BackendChoice backend = cli::resolve_relay_backend(a.backend, spec.backend, a.config);
  spec.backend = std::string(cli::backend_name(backend));
  try {
    cli::check_host_options(a.host, backend == cli::BackendChoice::host);
  } catch (const cli::ArgError& e) {
    std::cerr << "baton relay: " << e.message << "\n";
    return 2;
  }
  a.host.apply(spec.host);
  if (a.storage) spec.storage = a.storage;
  // The sampling options given apply to every stage over its file's "sampling"; an exact stage
  // (a verifier) keeps choosing by argmax and takes only the seed and --logprobs.
  if (a.sampling.any)
    for (StageSpec& st : spec.stages) {
      SamplingOptions s = a.sampling.over(st.sampling);
      if (st.exact) s.params = st.sampling.params;
      st.sampling = std::move(s);
    }
  // With --requests, a tokenizer next to the model is taken for text lines, if any.
  std::optional<Tokenizer> tok =
      cli::relay_tokenizer(spec, a.config, a.text.has_value(), a.requests.has_value());
  if (a.trace) add_tracing(spec);
  if (tok) resolve_text(spec, *tok);
  if (a.requests) spec.slots = a.concurrency;

  const std::unique_ptr<RuntimeRelay> relay = cli::build_prewarmed_relay(spec, backend);
  // Request text is text (added tokens written in it are not matched) unless the operator says
  // otherwise: --request-specials, or the relay file's "trusted_text".
  const bool specials = a.request_specials || spec.trusted_text;
  if (a.requests) {
    std::string exact;  // a stage a line's own sampling may not alter
    for (const StageSpec& st : spec.stages)
      if (st.exact) exact = st.name;
    return cli::run_request_file(*relay, *a.requests, a.concurrency, a.sequential, a.json, tok,
                                 specials, exact);
  }
  const std::vector<std::int32_t> request =
      a.ids ? *a.ids : (specials ? tok->encode(*a.text) : tok->encode_ordinary_text(*a.text));
  RelayResult r = relay->run(request);
  std::vector<double> totals{r.total_ms};
  for (int i = 1; i < a.repeat; ++i) {
    r = relay->run(request);
    totals.push_back(r.total_ms);
  }
  std::sort(totals.begin(), totals.end());
  const double median_ms = totals[totals.size() / 2];

  if (a.json) {
    nlohmann::json out = {{"backend", relay->backend_name()},
                          {"verdict", verdict_name(r.verdict)},
                          {"cycles", r.cycles},
                          {"total_ms", r.total_ms},
                          {"prefill_tokens", r.prefill_tokens()},
                          {"shared_tokens", r.shared_tokens},
                          {"shared_ms", r.shared_ms},
                          {"stages", nlohmann::json::array()}};
    if (a.repeat > 1) out["median_total_ms"] = median_ms;
    if (a.sampling.any) out["seed"] = a.sampling.options.seed;
    for (const StageRun& s : r.runs) {
      nlohmann::json j = {{"name", s.name},
                          {"cycle", s.cycle},
                          {"ids", s.ids},
                          {"stopped", s.stopped},
                          {"input_tokens", s.input_tokens},
                          {"ms", s.ms},
                          {"forwards", s.forwards},
                          {"skipped", s.skipped},
                          {"host_waits", s.host_waits}};
      if (!s.stopped_by.empty()) j["stopped_by"] = s.stopped_by;
      if (!s.logprobs.empty()) j["logprobs"] = cli::logprobs_json(s.logprobs);
      if (tok) j["text"] = tok->decode_known(s.ids);
      if (a.trace) {
        j["trace"] = nlohmann::json::array();
        for (const TraceRow& row : s.trace)
          j["trace"].push_back({{"step", row.step},
                                {"position", row.position},
                                {"token", row.token},
                                {"skipped", row.skipped},
                                {"start_ms", row.start_ms},
                                {"step_ms", row.step_ms}});
      }
      out["stages"].push_back(std::move(j));
    }
    // Model output need not be valid UTF-8 (a stage may stop mid-character): JSON text
    // fields carry U+FFFD there; the ids are exact.
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  for (const StageRun& s : r.runs) {
    std::cout << "[cycle " << s.cycle << "] " << s.name << " (" << s.input_tokens << " in, "
              << s.ids.size() << " out, " << s.ms << " ms):";
    if (tok) {
      std::cout << " " << tok->decode_known(s.ids) << "\n";
    } else {
      for (std::int32_t id : s.ids) std::cout << " " << id;
      std::cout << "\n";
    }
    if (a.trace) print_trace(s, tok);
  }
  std::cout << "verdict: " << verdict_name(r.verdict) << ", cycles: " << r.cycles
            << ", total: " << r.total_ms << " ms";
  if (a.repeat > 1) std::cout << " (median of " << a.repeat << ": " << median_ms << " ms)";
  std::cout << ", backend: " << relay->backend_name() << "\n";
  return 0;
}
