// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton serve`: relays and plain model folders over HTTP with the OpenAI API
/// (docs/serve.md).
///
///   baton serve [--config relay.json ...] [--model DIR [--model-name NAME] [--max-tokens N]
///               [--max-prompt-tokens N] [--lora NAME=DIR ...] [--max-loras N]
///               [--max-cpu-loras N]] [--host 127.0.0.1] [--port 8080]
///               [--concurrency N] [--queue N] [--api-key KEY] [--public-metrics]
///               [--max-body BYTES]
///               [--drain-seconds S] [--max-connections N] [--max-client-connections N]
///               [--request-specials NAME] [--backend host|cuda] [--threads N]
///               [--bf16-products | --f32-products]
///
/// Every request goes through its relay's batch scheduler; a model folder is served as a relay
/// of one stage, with one more stage per adapter slot when it serves adapters
/// (serve/served_model.hpp, serve/adapter_table.hpp). SIGTERM or SIGINT: new requests get
/// 503, those in flight finish (for at most --drain-seconds), then the program exits 0.
#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "backend_choice.hpp"
#include "baton/model/model_dispatch.hpp"
#include "baton/relay/runtime_relay_instances.hpp"  // compiled once, in dispatch/
#include "baton/text/chat_config.hpp"
#include "baton/text/model_chat.hpp"
#include "baton/text/relay_text.hpp"
#include "commands.hpp"
#include "host_choice.hpp"
#include "relay_setup.hpp"
#include "serve/adapter_api.hpp"
#include "serve/served_model.hpp"
#include "serve/server.hpp"
#include "storage_choice.hpp"

namespace serve_command {

using namespace baton;

constexpr int kMaxConcurrency = 1024;
constexpr int kMaxQueue = 4096;
/// Connections at most (each has a thread, and its stack): --max-connections' range.
constexpr int kMaxConnections = 8192;
/// --max-tokens' and --max-prompt-tokens' upper bound (each slot holds both).
constexpr int kMaxModelTokens = 1 << 20;
/// --max-loras' bound: each slot is a stage with --concurrency KV slots of its own.
constexpr int kMaxLoras = 256;
/// --max-cpu-loras' bound.
constexpr int kMaxCpuLoras = 4096;

constexpr std::string_view kUsage =
    "usage: baton serve [--config FILE ...] [--model DIR [--model-name NAME] [--max-tokens N]\n"
    "                   [--max-prompt-tokens N] [--lora NAME=DIR ...] [--max-loras N]\n"
    "                   [--max-cpu-loras N]] [--host ADDR] [--port N]\n"
    "                   [--concurrency N] [--queue N] [--api-key KEY] [--public-metrics]\n"
    "                   [--max-body BYTES]\n"
    "                   [--drain-seconds S] [--max-connections N] [--max-client-connections N]\n"
    "                   [--request-specials NAME] [--backend host|cuda] [--threads N]\n"
    "                   [--bf16-products | --f32-products]\n"
    "  --config FILE    a relay to serve (JSON, docs/relay.md); clients name it by its \"name\"\n"
    "                   field, else the file's name without .json; repeat for more relays\n"
    "  --model DIR      a model folder (config.json, safetensors, tokenizer files) served as\n"
    "                   one model: chat through its own chat template, completions as text\n"
    "  --model-name NAME  what clients call --model (default: the folder's name)\n"
    "  --max-tokens N   tokens a request to --model may generate at most (default 256)\n"
    "  --max-prompt-tokens N  tokens of a prompt to --model at most (default 1024)\n"
    "  --lora NAME=DIR  serve the PEFT adapter in DIR on --model as the model id NAME; repeat\n"
    "                   for more; a relay stage may name it ({\"lora\": \"NAME\"})\n"
    "  --max-loras N    adapters that run at once (slots; default: the --lora count, at least 1);\n"
    "                   with it, POST /v1/load_lora_adapter and /v1/unload_lora_adapter work\n"
    "  --max-cpu-loras N  adapters kept in memory, those in slots included (default: the larger\n"
    "                   of --max-loras and the --lora count); others are read again on demand\n"
    "  --host ADDR      the address to listen on (default 127.0.0.1: this machine only)\n"
    "  --port N         the port (default 8080; 0: any free port, printed on start)\n"
    "  --concurrency N  requests each relay runs at once: slots per stage (default 16)\n"
    "  --queue N        requests a relay accepts before answering 429 (default 4 x concurrency,\n"
    "                   x (1 + --max-loras) with adapters)\n"
    "  --api-key KEY    require 'Authorization: Bearer KEY' (default: $BATON_API_KEY if set)\n"
    "  --public-metrics GET /metrics without the key (an inference gateway's scraper)\n"
    "  --max-body BYTES request bodies at most (default 1048576; larger: 413)\n"
    "  --drain-seconds S  on SIGTERM, how long requests in flight may take (default 30)\n"
    "  --max-connections N  open connections at most (default 1024; more: 503)\n"
    "  --max-client-connections N  open connections from one address at most (default 512)\n"
    "  --request-specials NAME  relay or model NAME's request text may spell added tokens such as\n"
    "                   <|im_end|> as those tokens (default: request text is plain text)\n";

struct Args {
  std::vector<std::string> configs;
  std::optional<std::string> model;  ///< --model DIR
  std::optional<std::string> model_name;
  int max_tokens = 256;
  int max_prompt_tokens = 1024;
  std::vector<std::pair<std::string, std::string>> loras;  ///< --lora NAME=DIR, in order
  std::optional<int> max_loras, max_cpu_loras;
  serve::ServerOptions server;
  int concurrency = 16;
  std::optional<int> queue;
  bool help = false;
  std::optional<cli::BackendChoice> backend;
  cli::HostChoice host;
  std::optional<Storage> storage;  ///< --storage; unset: each relay file's
};

Args parse_args(int argc, char** argv) {
  Args a;
  cli::SeenOptions seen;
  bool model_options = false;  // --model-name, --max-tokens, --max-prompt-tokens
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("-") && arg != "--config" && arg != "--request-specials" && arg != "--lora")
      seen.once(arg);
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw cli::ArgError{std::string(arg) + " needs a value"};
      return cli::non_empty(arg, argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--config") {
      a.configs.emplace_back(value());
    } else if (arg == "--model") {
      a.model = std::string(value());
    } else if (arg == "--model-name") {
      a.model_name = std::string(value());
      model_options = true;
    } else if (arg == "--max-tokens" || arg == "--max-prompt-tokens") {
      const int n = cli::parse_int<int>(value(), arg);
      if (n < 1 || n > kMaxModelTokens)
        throw cli::ArgError{std::string(arg) + " " + std::to_string(n) + " is outside [1, " +
                            std::to_string(kMaxModelTokens) + "]"};
      (arg == "--max-tokens" ? a.max_tokens : a.max_prompt_tokens) = n;
      model_options = true;
    } else if (arg == "--lora") {
      const std::string v(value());
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw cli::ArgError{"--lora " + detail::excerpt(v) + ": give NAME=DIR"};
      std::string name = v.substr(0, eq);
      if (const auto why = serve::adapter_name_problem(name))
        throw cli::ArgError{"--lora " + detail::excerpt(v) + ": the name " + *why};
      for (const auto& [n, d] : a.loras)
        if (n == name) throw cli::ArgError{"--lora " + detail::excerpt(name) + " is given twice"};
      a.loras.emplace_back(std::move(name), v.substr(eq + 1));
      model_options = true;
    } else if (arg == "--max-loras" || arg == "--max-cpu-loras") {
      const int n = cli::parse_int<int>(value(), arg);
      const int top = arg == "--max-loras" ? kMaxLoras : kMaxCpuLoras;
      if (n < 1 || n > top)
        throw cli::ArgError{std::string(arg) + " " + std::to_string(n) + " is outside [1, " +
                            std::to_string(top) + "]"};
      (arg == "--max-loras" ? a.max_loras : a.max_cpu_loras) = n;
      model_options = true;
    } else if (arg == "--host") {
      a.server.host = value();
    } else if (arg == "--port") {
      a.server.port = cli::parse_int<int>(value(), "--port");
      if (a.server.port < 0 || a.server.port > 65535)
        throw cli::ArgError{"--port " + std::to_string(a.server.port) + " is outside [0, 65535]"};
    } else if (arg == "--concurrency") {
      a.concurrency = cli::parse_int<int>(value(), "--concurrency");
      if (a.concurrency < 1 || a.concurrency > kMaxConcurrency)
        throw cli::ArgError{"--concurrency " + std::to_string(a.concurrency) + " is outside [1, " +
                            std::to_string(kMaxConcurrency) + "]"};
    } else if (arg == "--queue") {
      a.queue = cli::parse_int<int>(value(), "--queue");
      if (*a.queue < 1 || *a.queue > kMaxQueue)
        throw cli::ArgError{"--queue " + std::to_string(*a.queue) + " is outside [1, " +
                            std::to_string(kMaxQueue) + "]"};
    } else if (arg == "--public-metrics") {
      a.server.public_metrics = true;
    } else if (arg == "--api-key") {
      a.server.api_key = std::string(value());
    } else if (arg == "--max-body") {
      const long long n = cli::parse_int<long long>(value(), "--max-body");
      if (n < 1024 || n > (1LL << 30))
        throw cli::ArgError{"--max-body " + std::to_string(n) + " is outside [1024, 2^30]"};
      a.server.http.limits.body = static_cast<std::size_t>(n);
    } else if (arg == "--drain-seconds") {
      const int s = cli::parse_int<int>(value(), "--drain-seconds");
      if (s < 0 || s > 3600)
        throw cli::ArgError{"--drain-seconds " + std::to_string(s) + " is outside [0, 3600]"};
      a.server.drain_seconds = s;
    } else if (arg == "--max-connections" || arg == "--max-client-connections") {
      const int n = cli::parse_int<int>(value(), arg);
      if (n < 1 || n > kMaxConnections)
        throw cli::ArgError{std::string(arg) + " " + std::to_string(n) + " is outside [1, " +
                            std::to_string(kMaxConnections) + "]"};
      (arg == "--max-connections" ? a.server.http.max_connections
                                  : a.server.http.max_client_connections) = n;
    } else if (arg == "--request-specials") {
      a.server.request_specials.emplace_back(value());
    } else if (arg == "--backend") {
      a.backend = cli::parse_backend(value());
    } else if (cli::parse_host_option(arg, value, a.host)) {
    } else if (cli::parse_storage_option(arg, value, a.storage)) {
    } else {
      throw cli::ArgError{"unknown argument '" + detail::excerpt(arg) + "'"};
    }
  }
  if (a.help) return a;
  if (a.configs.empty() && !a.model)
    throw cli::ArgError{"give a relay (--config FILE) or a model folder (--model DIR) to serve"};
  if (!a.model && model_options)
    throw cli::ArgError{
        "--model-name, --max-tokens, --max-prompt-tokens, --lora, --max-loras and "
        "--max-cpu-loras apply to --model DIR"};
  if (a.max_cpu_loras && !a.max_loras && a.loras.empty())
    throw cli::ArgError{"--max-cpu-loras needs adapters: --lora NAME=DIR or --max-loras N"};
  if (a.max_loras || !a.loras.empty()) {
    const int given = static_cast<int>(a.loras.size());
    if (!a.max_loras) a.max_loras = std::clamp(given, 1, kMaxLoras);
    if (!a.max_cpu_loras) a.max_cpu_loras = std::max(*a.max_loras, given);
    if (*a.max_cpu_loras < *a.max_loras)
      throw cli::ArgError{"--max-cpu-loras " + std::to_string(*a.max_cpu_loras) +
                          " is less than --max-loras " + std::to_string(*a.max_loras) +
                          " (adapters in slots are in memory too)"};
  }

  // Four requests per slot of the base, and of each adapter slot: their KV slots are apart.
  if (!a.queue) a.queue = std::min(4 * a.concurrency * (1 + a.max_loras.value_or(0)), kMaxQueue);
  if (*a.queue < a.concurrency)
    throw cli::ArgError{"--queue " + std::to_string(*a.queue) + " is less than --concurrency " +
                        std::to_string(a.concurrency)};
  if (!a.server.api_key) {
    if (const char* k = std::getenv("BATON_API_KEY"); k && *k) a.server.api_key = std::string(k);
  }
  return a;
}

std::unique_ptr<serve::ServedRelay> load(const std::string& config, const Args& a) {
  RelaySpec spec = load_relay_spec(config);
  // A stage naming a served adapter ("lora": NAME) reads that adapter's folder: the relay
  // holds its own copy from here, whatever later loads and unloads do to the name.
  for (StageSpec& s : spec.stages) {
    if (!s.served_adapter) continue;
    const auto it = std::find_if(a.loras.begin(), a.loras.end(),
                                 [&](const auto& l) { return l.first == *s.served_adapter; });
    if (it == a.loras.end())
      throw cli::ArgError{config + ": stage '" + s.name + "' names the served adapter '" +
                          detail::excerpt(*s.served_adapter) + "', but no --lora " +
                          detail::excerpt(*s.served_adapter) + "=DIR is given"};
    s.adapter = it->second;
    s.served_adapter.reset();
  }
  const cli::BackendChoice backend = cli::resolve_relay_backend(a.backend, spec.backend, config);
  spec.backend = std::string(cli::backend_name(backend));
  cli::check_host_options(a.host, backend == cli::BackendChoice::host);
  a.host.apply(spec.host);
  if (a.storage) spec.storage = a.storage;
  // Requests arrive as text: a tokenizer next to the model is taken when the file names none.
  std::optional<Tokenizer> tok = cli::relay_tokenizer(spec, config, false, true);
  if (tok) resolve_text(spec, *tok);
  spec.slots = a.concurrency;
  std::unique_ptr<RuntimeRelay> relay = cli::build_prewarmed_relay(spec, backend);
  const std::string name = served_name(spec);
  const auto& allowed = a.server.request_specials;
  const bool specials = std::find(allowed.begin(), allowed.end(), name) != allowed.end();
  return std::make_unique<serve::ServedRelay>(std::move(spec), std::move(tok), std::move(relay),
                                              serve::ServeLimits{a.concurrency, *a.queue},
                                              specials);
}

/// The name --model is served as: --model-name, else the folder's own name.
std::string model_name(const Args& a) {
  if (a.model_name) return *a.model_name;
  const std::filesystem::path dir = std::filesystem::absolute(*a.model).lexically_normal();
  // lexically_normal keeps a trailing separator ("dir/" has an empty filename): the folder is
  // the last non-empty component.
  return (dir.has_filename() ? dir : dir.parent_path()).filename().string();
}

/// --model DIR as a served model: the base model as a one-stage relay, pre-warmed.
std::unique_ptr<serve::ServedRelay> load_model(const Args& a, const std::string& name) {
  const std::filesystem::path dir = *a.model;
  const cli::BackendChoice backend = cli::resolve_relay_backend(a.backend, std::nullopt, *a.model);
  cli::check_host_options(a.host, backend == cli::BackendChoice::host);
  const ModelConfig cfg = load_runtime_config(dir);
  const auto tok_path = dir / "tokenizer.json";
  BATON_CHECK(std::filesystem::exists(tok_path), config_error, "--model ", *a.model,
              ": no tokenizer.json (a served model takes text)");
  Tokenizer tok = Tokenizer::from_file(tok_path);
  ChatConfig chat = load_chat_config(dir);
  serve::ModelServeSpec m;
  m.dir = dir;
  m.name = name;
  m.max_tokens = a.max_tokens;
  m.max_prompt_tokens = a.max_prompt_tokens;
  m.max_loras = a.max_loras.value_or(0);
  m.stop =
      stop_ids_or_eos_token(default_stop_ids(cfg.eos_token_ids, dir, cfg.vocab_size), chat, tok);
  RelaySpec spec = serve::model_relay_spec(m);
  spec.backend = std::string(cli::backend_name(backend));
  a.host.apply(spec.host);
  if (a.storage) spec.storage = a.storage;
  spec.tokenizer_ids = tok.vocab_size();  // checked against the model's rows by the builder
  spec.slots = a.concurrency;
  std::unique_ptr<RuntimeRelay> relay = cli::build_prewarmed_relay(spec, backend);
  const auto& allowed = a.server.request_specials;
  const bool specials = std::find(allowed.begin(), allowed.end(), name) != allowed.end();
  if (!a.max_loras)
    return std::make_unique<serve::ServedModel>(
        std::move(spec), std::move(tok), std::move(chat), std::move(relay),
        serve::ServeLimits{a.concurrency, *a.queue}, specials);
  auto served = std::make_unique<serve::ServedModel>(
      std::move(spec), std::move(tok), std::move(chat), std::move(relay),
      serve::ServeLimits{a.concurrency, *a.queue}, specials,
      serve::AdapterLimits{.max_loras = *a.max_loras, .max_cpu_loras = *a.max_cpu_loras});
  serve::AdapterTable& table = *served->adapters();
  for (const auto& [lora, dir] : a.loras) {
    try {
      table.add(lora, dir);
    } catch (const error& e) {
      throw cli::ArgError{"--lora " + lora + "=" + dir + ": " + e.what()};
    }
  }
  // The first --max-loras adapters start in their slots (no request can arrive yet, so this
  // thread may swap them in): the first requests do not wait for a placement.
  for (std::size_t k = 0; k < a.loras.size() && static_cast<int>(k) < *a.max_loras; ++k)
    (void)table.place(a.loras[k].first);
  return served;
}

}  // namespace serve_command

int cmd_serve(int argc, char** argv) {
  using namespace serve_command;
  // Signals go to one thread that waits for them (sigwait): blocked here, before any thread
  // starts, so every thread inherits the mask and no handler (and no global) is needed.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);  // the program's own "stop waiting"
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A client that closes its connection while an answer is being written must cost a failed
  // write (EPIPE, which ends that stream), never the process.
  std::signal(SIGPIPE, SIG_IGN);

  Args a;
  try {
    a = parse_args(argc, argv);
  } catch (const cli::ArgError& e) {
    // The error and where the options are, not the whole option list: a mistyped flag should
    // not bury its message under a page of usage.
    std::cerr << "baton serve: " << e.message << "\n"
              << "(baton serve --help lists the options)\n";
    return 2;
  }
  if (a.help) {
    std::cout << kUsage << cli::backend_usage() << cli::host_usage() << cli::storage_usage();
    return 0;
  }
  if (a.backend) (void)cli::resolve_backend(a.backend);
  std::vector<std::unique_ptr<serve::ServedRelay>> relays;
  std::string names;
  try {
    const auto added = [&](const std::string& what, const std::string& rename) {
      for (std::size_t k = 0; k + 1 < relays.size(); ++k)
        BATON_CHECK(relays[k]->name() != relays.back()->name(), config_error, what,
                    ": another relay or model is served as '", relays.back()->name(), "' (", rename,
                    ")");
      names += (names.empty() ? "" : ", ") + relays.back()->name();
    };
    for (const std::string& c : a.configs) {
      relays.push_back(load(c, a));
      added(c, "give one a \"name\"");
    }
    if (a.model) {
      relays.push_back(load_model(a, model_name(a)));
      added("--model " + *a.model, "give it another with --model-name");
    }
    for (const auto& [lora, dir] : a.loras)
      for (const auto& r : relays)
        if (r->name() == lora)
          throw cli::ArgError{"--lora " + lora + "=" + dir + ": a relay or model is served as '" +
                              lora + "' already"};
  } catch (const cli::ArgError& e) {
    std::cerr << "baton serve: " << e.message << "\n";
    return 2;
  }
  for (const std::string& n : a.server.request_specials)
    if (std::none_of(relays.begin(), relays.end(), [&](const auto& r) { return r->name() == n; })) {
      std::cerr << "baton serve: --request-specials " << detail::excerpt(n)
                << ": no relay or model is served by that name (" << names << ")\n";
      return 2;
    }
  serve::Server server(std::move(relays), a.server);
  const int port = server.bind();
  std::cout << "baton serve: listening on http://" << a.server.host << ":" << port << " (" << names
            << (a.server.api_key ? "; API key required" : "") << ")" << std::endl;

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGUSR1) return;
    std::cout << "baton serve: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": draining requests in flight" << std::endl;
    server.shutdown();
  });
  server.listen();
  pthread_kill(waiter.native_handle(), SIGUSR1);  // a no-op once the waiter has returned
  waiter.join();
  std::cout << "baton serve: stopped" << std::endl;
  return 0;
}
