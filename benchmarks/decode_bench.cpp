// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Host decode benchmark: prefill and decode tokens/s of a few-hundred-MB model in bf16
///        and f32 storage, the weight bytes a decode step reads, the GB/s that achieves, and the
///        machine's memory bandwidth measured in the same run (STREAM-like, OpenMP). JSON on
///        stdout, progress on stderr. See benchmarks/README.md.
///
/// Decode on the host streams every weight matrix once per token, so bytes/step × tokens/s
/// against the measured bandwidth says how far the kernels are from the hardware limit.
///
/// `decode_bench --backend cuda ...` (first on the line) runs the CUDA benchmark instead
/// (decode_bench_cuda.cu; built with CUDA only); `--backend host` is the default.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/dtype.hpp"
#include "baton/core/storage.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/kernels/argmax.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/host_forward.hpp"
#include "decode_bench_cuda.hpp"
#include "random_model.hpp"

namespace fs = std::filesystem;
using namespace baton;
using bench::RandomModelShape;
using bench::write_random_model;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Options {
  std::string model;  ///< an existing model folder; empty: write a random one
  std::string work_dir;
  bool keep = false;
  int runs = 5, prompt = 32, decode = 64;
  int threads = 0;  ///< 0: OpenMP's default
  std::size_t stream_mib = 1024;
  bool bandwidth = true;
  bool pool = true;  ///< loops on a HostContext's thread pool; false: OpenMP (--openmp)
  /// HostContextOptions::bf16_products: --bf16-products (true), --f32-products (false); unset:
  /// the context's default (on where the CPU has AVX512-BF16 and the isa is avx512)
  std::optional<bool> bf16_products;
  bool amx = true;  ///< HostContextOptions::amx: --no-amx keeps bf16 products on vdpbf16ps
  /// HostContextOptions::isa (--isa avx512|avx2|portable): an older CPU's kernels on this one
  std::optional<host_simd::Isa> isa;
  std::vector<std::string> storages = {"bf16", "f32"};  ///< in this order
  RandomModelShape shape;  ///< the random model's (benchmarks/random_model.hpp)
};

// ---- memory bandwidth, STREAM style ------------------------------------------------------

struct Bandwidth {
  double copy = 0, triad = 0, read = 0;  ///< GB/s (1e9 bytes/s), medians
  double best() const { return std::max({copy, triad, read}); }
};

/// copy c = a (2 arrays of traffic), triad a = b + s c (3), read sum(a) (1) over arrays of
/// `mib` MiB of doubles each, touched first in parallel so pages sit near their threads.
/// Bytes are counted as STREAM does (no write-allocate traffic).
Bandwidth measure_bandwidth(std::size_t mib, int reps) {
  const std::size_t n = mib * (1u << 20) / sizeof(double);
  // The same allocator as the weights (huge pages where the system allows), so the test
  // measures the peak the decode's weight stream can reach, not a 4 KiB-page figure.
  double *a = nullptr, *b = nullptr, *c = nullptr;
  try {
    a = static_cast<double*>(host_memory::allocate(n * sizeof(double)));
    b = static_cast<double*>(host_memory::allocate(n * sizeof(double)));
    c = static_cast<double*>(host_memory::allocate(n * sizeof(double)));
  } catch (const std::bad_alloc&) {
    host_memory::release(a, n * sizeof(double));
    host_memory::release(b, n * sizeof(double));
    BATON_FAIL(capacity_error, "decode_bench: cannot allocate 3 x ", mib,
               " MiB for the bandwidth test (use --stream-mib)");
  }
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 1.0;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  std::vector<double> tc, tt, tr;
  volatile double sink = 0;
  for (int r = 0; r < reps + 1; ++r) {  // the first repetition warms up and is dropped
    auto t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
    const double copy_s = seconds_since(t0);
    t0 = Clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    const double triad_s = seconds_since(t0);
    t0 = Clock::now();
    double sum = 0;
    // Eight partial sums per thread: one running sum would make this an add-latency test
    // (a few GB/s per core), not a memory test.
#pragma omp parallel reduction(+ : sum)
    {
      const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
      const std::size_t id = static_cast<std::size_t>(omp_get_thread_num());
      const std::size_t lo = n * id / nt, hi = n * (id + 1) / nt;
      double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      std::size_t i = lo;
      for (; i + 8 <= hi; i += 8) {
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) acc[j] += a[i + j];
      }
      for (; i < hi; ++i) acc[0] += a[i];
      sum += ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    }
    const double read_s = seconds_since(t0);
    sink = sink + sum;
    if (r == 0) continue;
    tc.push_back(2.0 * n * sizeof(double) / copy_s / 1e9);
    tt.push_back(3.0 * n * sizeof(double) / triad_s / 1e9);
    tr.push_back(1.0 * n * sizeof(double) / read_s / 1e9);
  }
  host_memory::release(a, n * sizeof(double));
  host_memory::release(b, n * sizeof(double));
  host_memory::release(c, n * sizeof(double));
  return {median(tc), median(tt), median(tr)};
}

// ---- the model benchmark -------------------------------------------------------------------

template <WeightStorage S>
nlohmann::json bench_storage(const Options& o, const fs::path& dir, std::string_view label) {
  std::cerr << "decode_bench: loading " << dir.string() << " as " << label << "\n";
  auto t0 = Clock::now();
  const auto model = load_model<host, S>(dir);
  const double load_s = seconds_since(t0);
  const ModelConfig& c = model.config();
  BATON_CHECK(c.head_dim == 64, config_error, "decode_bench instantiates head_dim 64 only; ",
              dir.string(), " has ", c.head_dim);
  const auto slice = LoraSlice<16, host>::none(c);
  KvBuffer<layout::HeadMajor<f32, 64>, host> cache(
      c, KvShape{.prefix_capacity = 0, .tail_capacity = o.prompt + o.decode, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  // bf16 products apply to bf16 weights only; the context refuses them on a CPU without them
  const bool asked = o.bf16_products.value_or(false);
  HostContext ctx({.threads = o.threads,
                   .isa = asked ? std::optional(host_simd::Isa::avx512) : o.isa,
                   .bf16_products = o.bf16_products,
                   .amx = o.amx});
  if (o.pool) ws.extras.bind(ctx);
  std::vector<std::int32_t> prompt(o.prompt);
  for (int i = 0; i < o.prompt; ++i)
    prompt[i] = static_cast<std::int32_t>((i * 7919 + 13) % c.vocab_size);
  const KvTarget slot = KvTarget::in_slot(0);

  std::vector<double> prefill_tps, decode_tps, step_ms;
  std::vector<std::int32_t> first_tokens, greedy;
  for (int r = 0; r < o.runs + 1; ++r) {  // run 0 warms caches and the workspace; dropped
    cache.rewind(0);
    t0 = Clock::now();
    std::span<const float> logits = forward(model, ws, slice, cache, slot, 0,
                                            std::span<const std::int32_t>(prompt), Logits::last);
    const double prefill_s = seconds_since(t0);
    std::int32_t tok = kernels::argmax(logits.data(), c.vocab_size);
    const std::int32_t first = tok;
    greedy.assign(1, tok);  // preallocated by the warm-up run, so no allocation is timed
    greedy.reserve(static_cast<std::size_t>(o.decode) + 1);
    t0 = Clock::now();
    for (int s = 0; s < o.decode; ++s) {
      logits = forward(model, ws, slice, cache, slot, o.prompt + s,
                       std::span<const std::int32_t>(&tok, 1), Logits::last);
      tok = kernels::argmax(logits.data(), c.vocab_size);
      greedy.push_back(tok);
    }
    const double decode_s = seconds_since(t0);
    if (r == 0) continue;
    prefill_tps.push_back(o.prompt / prefill_s);
    if (o.decode > 0) {
      decode_tps.push_back(o.decode / decode_s);
      step_ms.push_back(1e3 * decode_s / o.decode);
    }
    first_tokens.push_back(first);
    std::cerr << "  run " << r << ": prefill " << o.prompt / prefill_s << " tok/s";
    if (o.decode > 0) std::cerr << ", decode " << o.decode / decode_s << " tok/s";
    std::cerr << "\n";
  }
  const double bytes = static_cast<double>(model.weight_bytes());
  const double dec = decode_tps.empty() ? 0.0 : median(decode_tps);
  return {{"storage", label},
          {"load_s", load_s},
          {"weight_bytes_per_step", model.weight_bytes()},
          {"prefill_tokens_per_s", median(prefill_tps)},
          {"decode_tokens_per_s", dec},
          {"decode_ms_per_step", step_ms.empty() ? 0.0 : median(step_ms)},
          {"decode_tokens_per_s_runs", decode_tps},
          {"prefill_tokens_per_s_runs", prefill_tps},
          {"achieved_gb_per_s", bytes * dec / 1e9},
          {"first_token", first_tokens.empty() ? -1 : first_tokens.front()},
          {"greedy_tokens", greedy}};
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b < s.size()) {
    const std::size_t e = std::min(s.find(',', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

int usage(const char* argv0) {
  std::cerr
      << "usage: " << argv0
      << " [--backend host] [--model DIR] [--work-dir DIR] [--keep] [--runs N] [--prompt N]\n"
         "       [--decode N] [--threads N] [--openmp] [--bf16-products | --f32-products] "
         "[--no-amx] "
         "[--storage LIST] "
         "[--stream-mib MIB]\n"
         "       [--isa avx512|avx2|portable]  (--storage: f32,bf16,f16,q8_0,q4_0)\n"
         "       [--no-bandwidth] [--no-f32] [--layers N] [--hidden N] [--ffn N] [--vocab N]\n"
         "  LIST: comma-separated bf16, f16, f32 (default bf16,f32); empty: bandwidth only\n"
         "       "
      << argv0 << " --backend cuda [--help]  (the CUDA benchmark; benchmarks/README.md)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc >= 3 && std::string_view(argv[1]) == "--backend") {
    const std::string_view backend = argv[2];
    argv[2] = argv[0];  // the rest of the line, with the program's name in front
    if (backend == "cuda") {
#if BATON_BENCH_CUDA
      return decode_bench_cuda(argc - 2, argv + 2);
#else
      std::cerr << "decode_bench: --backend cuda needs a build with -DBATON_ENABLE_CUDA=ON\n";
      return 2;
#endif
    }
    if (backend != "host") return usage(argv[0]);
    argc -= 2;
    argv += 2;
  }
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--model")
      o.model = next();
    else if (a == "--work-dir")
      o.work_dir = next();
    else if (a == "--keep")
      o.keep = true;
    else if (a == "--runs")
      o.runs = std::stoi(next());
    else if (a == "--prompt")
      o.prompt = std::stoi(next());
    else if (a == "--decode")
      o.decode = std::stoi(next());
    else if (a == "--stream-mib")
      o.stream_mib = std::stoul(next());
    else if (a == "--no-f32")
      std::erase(o.storages, std::string("f32"));
    else if (a == "--storage")
      o.storages = split_list(next());
    else if (a == "--threads")
      o.threads = std::stoi(next());
    else if (a == "--isa") {
      const std::string_view v = next();
      o.isa = v == "avx512"     ? host_simd::Isa::avx512
              : v == "avx2"     ? host_simd::Isa::avx2
              : v == "portable" ? std::optional(host_simd::Isa::portable)
                                : std::nullopt;
      if (!o.isa) return usage(argv[0]);
    } else if (a == "--openmp")
      o.pool = false;
    else if (a == "--bf16-products")
      o.bf16_products = true;
    else if (a == "--f32-products")
      o.bf16_products = false;
    else if (a == "--no-amx")
      o.amx = false;
    else if (a == "--no-bandwidth")
      o.bandwidth = false;
    else if (a == "--layers")
      o.shape.layers = std::stoi(next());
    else if (a == "--hidden")
      o.shape.hidden = std::stoi(next());
    else if (a == "--ffn")
      o.shape.ffn = std::stoi(next());
    else if (a == "--vocab")
      o.shape.vocab = std::stoi(next());
    else
      return usage(argv[0]);
  }
  if (o.runs < 1 || o.prompt < 1 || o.decode < 0 || o.threads < 0) return usage(argv[0]);
  for (const std::string& st : o.storages)
    if (!parse_storage(st)) return usage(argv[0]);
  if (o.threads > 0) omp_set_num_threads(o.threads);

  fs::path dir = o.model;
  fs::path written;
  nlohmann::json out;
  const bool any_model = !o.storages.empty();  // an empty --storage: bandwidth only
  if (any_model && dir.empty()) {
    const fs::path base = o.work_dir.empty() ? fs::temp_directory_path() : fs::path(o.work_dir);
    written = base / ("baton_decode_bench_" + std::to_string(::getpid()));
    std::cerr << "decode_bench: writing a random bf16 model to " << written.string() << "\n";
    const auto t0 = Clock::now();
    out["model_file_bytes"] = write_random_model(o.shape, written);
    out["model_write_s"] = seconds_since(t0);
    dir = written;
  }
  if (any_model) {
    const ModelConfig cfg = io::load_model_config(dir);
    out["model"] = {{"dir", dir.string()},       {"random", !written.empty()},
                    {"hidden", cfg.hidden_size}, {"layers", cfg.num_layers},
                    {"heads", cfg.num_heads},    {"kv_heads", cfg.num_kv_heads},
                    {"head_dim", cfg.head_dim},  {"ffn", cfg.intermediate_size},
                    {"vocab", cfg.vocab_size},   {"tied", cfg.tie_word_embeddings}};
  }
  out["threads"] = omp_get_max_threads();
  out["threading"] = o.pool ? "pool" : "openmp";
  {  // what the contexts run: the default follows the CPU and the kernels
    const HostContext probe(
        {.threads = 1, .isa = o.isa, .bf16_products = o.bf16_products, .amx = o.amx});
    out["bf16_products"] = probe.bf16_products();
    out["amx"] = probe.amx();
  }
  out["kernels"] = host_simd::isa_name(o.isa.value_or(host_simd::best_isa()));
  out["prompt_tokens"] = o.prompt;
  out["decode_steps"] = o.decode;
  out["runs"] = o.runs;

  Bandwidth bw;
  if (o.bandwidth) {
    std::cerr << "decode_bench: memory bandwidth, 3 x " << o.stream_mib << " MiB\n";
    bw = measure_bandwidth(o.stream_mib, o.runs);
    out["bandwidth_gb_per_s"] = {
        {"copy", bw.copy}, {"triad", bw.triad}, {"read", bw.read}, {"array_mib", o.stream_mib}};
  }

  const auto add_ratios = [&](nlohmann::json r) {
    if (!o.bandwidth) return r;
    const double g = r["achieved_gb_per_s"].get<double>();
    r["ratio_vs_triad"] = g / bw.triad;
    r["ratio_vs_read"] = g / bw.read;
    r["ratio_vs_best"] = g / bw.best();
    return r;
  };
  out["results"] = nlohmann::json::array();
  for (const std::string& st : o.storages) {
    if (st == "bf16") out["results"].push_back(add_ratios(bench_storage<bf16>(o, dir, st)));
    if (st == "f16") out["results"].push_back(add_ratios(bench_storage<f16>(o, dir, st)));
    if (st == "f32") out["results"].push_back(add_ratios(bench_storage<f32>(o, dir, st)));
    if (st == "q8_0") out["results"].push_back(add_ratios(bench_storage<q8_0>(o, dir, st)));
    if (st == "q4_0") out["results"].push_back(add_ratios(bench_storage<q4_0>(o, dir, st)));
  }

  if (!written.empty() && !o.keep) fs::remove_all(written);
  std::cout << out.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "decode_bench: " << e.what() << "\n";
  return 1;
}
