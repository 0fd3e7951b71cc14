// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What sampling costs per token beside a decode step of the 155M benchmark model
///        (issue 43's target: at most 5% of it), at vocabularies of 32,000 and 151,936 ids,
///        for one row and for a batch of 16, in one run.
///
///   sampling_bench [--threads 2] [--steps 40] [--draws 400] [--out sampling_bench.json]
///                  [--work-dir DIR]
///
/// The decode step: the random 155M Qwen2 (bf16, benchmarks/random_model.hpp, the shape of
/// benchmarks/llama_cpp/models.py's qwen2-155m) after a 64-token prompt per row, one token per
/// row through forward_batch() (the batch scheduler's forward), the median over --steps.
///
/// Sampling: the host decode loop's own Sampler (model/sampling.hpp) on logits rows, with the
/// host's passes over the row (vectors where the CPU has AVX2) and, beside them in the same run,
/// the scalar passes every loop shares; timed per row; and a batch of 16 rows, each its own
/// generation, chosen as the batch scheduler chooses a host batch: on the workspace's --threads
/// in parallel, each thread drawing in its own scratch (options with penalties rewriting each its
/// own row in place). The rows are
/// the model's own logits at 32k and, at 152k, the same rows tiled to 151,936 ids with a small
/// per-copy shift (so the kept sets grow with the vocabulary as a real one would, not stay at
/// 32k's); and all of them times 4 (peaked, as a trained model's are: the random model's are flat).
/// Configurations: greedy (the argmax), OpenAI's usual temperature + top_p, llama.cpp's defaults
/// (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, repeat_penalty 1.1 over 32 generated ids),
/// top_p alone at temperature 1.0 (the widest kept set), and the same with logprobs (top 5). Each
/// figure is the median over --draws calls (the row restored before each, outside the timing).
///
/// Output: JSON with the CPU's flags, the decode step's ms, every configuration's µs per token
/// and its share of the step, alone and at 16 rows.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/baton.hpp"
#include "bench_host.hpp"
#include "random_model.hpp"

namespace fs = std::filesystem;
using namespace baton;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int threads = 2;
  int steps = 40;
  int draws = 400;
  std::string out = "sampling_bench.json";
  fs::path work_dir = fs::temp_directory_path() / "baton-sampling-bench";
};

using bench::cpu_flags;
using bench::median;

struct Config {
  std::string name;
  SamplingOptions options;
};

std::vector<Config> configs() {
  std::vector<Config> c;
  c.push_back({"greedy", {}});
  SamplingOptions openai;
  openai.params.temperature = 0.7f;
  openai.params.top_p = 0.9f;
  c.push_back({"temperature 0.7, top_p 0.9", openai});
  SamplingOptions llama;
  llama.params.temperature = 0.8f;
  llama.params.top_k = 40;
  llama.params.top_p = 0.95f;
  llama.params.min_p = 0.05f;
  llama.params.repeat_penalty = 1.1f;
  c.push_back({"llama.cpp defaults (T 0.8, top_k 40, top_p 0.95, min_p 0.05, repeat 1.1)", llama});
  SamplingOptions wide;
  wide.params.temperature = 1.0f;
  wide.params.top_p = 0.95f;
  c.push_back({"temperature 1.0, top_p 0.95", wide});
  SamplingOptions lp = wide;
  lp.logprobs = true;
  lp.top_logprobs = 5;
  c.push_back({"temperature 1.0, top_p 0.95, top_logprobs 5", lp});
  return c;
}

/// µs per token of `cfg` over `rows` (each restored before a call), the median over `draws`:
/// with the host decode loop's own passes (BackendOps<host>: vectors where the CPU has AVX2), or
/// with the scalar ones every loop shares (kernels::RowPasses), for the side-by-side ratio.
double sample_us(const Config& cfg, const std::vector<std::vector<float>>& rows, int draws,
                 bool host_passes) {
  const int vocab = static_cast<int>(rows[0].size());
  const int max_new = 64;
  std::vector<float> row(rows[0].size());
  std::vector<double> us;
  Sampler sampler(cfg.options, vocab, max_new);
  for (int k = 0; k < 32; ++k) sampler.accepted((k * 977) % vocab);  // what the penalty reads
  for (int d = 0; d < draws; ++d) {
    const auto& src = rows[static_cast<std::size_t>(d) % rows.size()];
    std::copy(src.begin(), src.end(), row.begin());
    const auto t0 = Clock::now();
    // What the Decoder's step does on the host (greedy included: the sampler's exact argmax).
    // (with its log-probabilities when asked).
    const std::int32_t id = host_passes
                                ? sampler.choose(row, d % max_new, &BackendOps<host>::draw_token).id
                                : sampler.choose(row, d % max_new).id;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (id < 0) throw std::runtime_error("sampling_bench: no token drawn");
  }
  return median(us);
}

/// µs per batch of `rows.size()` rows (16), each its own generation, as the batch scheduler
/// chooses a host batch: on the workspace's threads in parallel (BackendOps<host>::for_each_row),
/// each row by its own Sampler (choose_as_is, the host's passes; choose for options that rewrite
/// the row, as the scheduler's decode rows do); the median over `draws`.
double batch_us(const Config& cfg, const std::vector<std::vector<float>>& rows, int draws,
                Workspace<host>& ws) {
  const int vocab = static_cast<int>(rows[0].size()), max_new = 64;
  const std::size_t n = 16;
  std::vector<Sampler> samplers;
  samplers.reserve(n);
  for (std::size_t k = 0; k < n; ++k) samplers.emplace_back(cfg.options, vocab, max_new);
  for (auto& s : samplers)
    for (int k = 0; k < 32; ++k) s.accepted((k * 977) % vocab);
  std::vector<std::vector<float>> batch(n, std::vector<float>(rows[0].size()));
  SampleScratchPool pool(vocab);  // a scratch a thread, as the scheduler's (sample_scratch.hpp)
  const bool as_is = cfg.options.logit_bias.empty() && !cfg.options.penalized();
  std::vector<double> us;
  for (int d = 0; d < draws; ++d) {
    for (std::size_t k = 0; k < n; ++k)
      std::copy(rows[(d + k) % rows.size()].begin(), rows[(d + k) % rows.size()].end(),
                batch[k].begin());
    const auto t0 = Clock::now();
    const auto one = [&](long k) {
      Sampler& s = samplers[static_cast<std::size_t>(k)];
      std::vector<float>& row = batch[static_cast<std::size_t>(k)];
      const kernels::SampleScratch work = pool.for_this_thread();
      const StepChoice c =
          as_is ? s.choose_as_is(row, d % max_new, &BackendOps<host>::draw_token, &work)
                : s.choose(row, d % max_new, &BackendOps<host>::draw_token, &work);
      if (c.id < 0) std::abort();
    };
    BackendOps<host>::for_each_row(ws, static_cast<long>(n), one);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  return median(us);
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--threads")
      o.threads = std::stoi(next());
    else if (a == "--steps")
      o.steps = std::stoi(next());
    else if (a == "--draws")
      o.draws = std::stoi(next());
    else if (a == "--out")
      o.out = next();
    else if (a == "--work-dir")
      o.work_dir = next();
    else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }

  // ---- the decode step ------------------------------------------------------------------
  bench::RandomModelShape shape;
  shape.layers = 8;  // qwen2-155m: hidden 1024, 8 layers, ffn 2816, vocab 32000
  const fs::path dir = o.work_dir / "qwen2-155m-bf16";
  if (!fs::exists(dir / "model.safetensors")) bench::write_random_model(shape, dir);
  const auto model = load_model<host, bf16>(dir);
  const ModelConfig& c = model.config();
  using Slice = LoraSlice<16, host>;
  using Cache = KvBuffer<layout::HeadMajor<f32, 64>, host>;
  const Slice none = Slice::none(c);
  constexpr int kRows = 16, kPrompt = 64;
  Cache cache(
      c, KvShape{.prefix_capacity = 0, .tail_capacity = kPrompt + o.steps + 2, .slots = kRows});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  HostContext ctx({.threads = o.threads});
  ws.extras.bind(ctx);

  std::vector<std::vector<std::int32_t>> prompts(kRows);
  for (int r = 0; r < kRows; ++r)
    for (int i = 0; i < kPrompt; ++i)
      prompts[r].push_back(static_cast<std::int32_t>((i * 7919 + r * 104729 + 13) % c.vocab_size));
  std::vector<std::vector<float>> rows32;  // the model's own logits, one row per slot
  const auto step_ms = [&](int n_rows, bool prefill, int at) {
    std::vector<BatchRow<Slice, Cache>> batch;
    std::vector<std::int32_t> tok(static_cast<std::size_t>(n_rows));
    for (int r = 0; r < n_rows; ++r) {
      tok[static_cast<std::size_t>(r)] = static_cast<std::int32_t>((at * 31 + r) % c.vocab_size);
      batch.push_back({&none, &cache, KvTarget::in_slot(r), prefill ? 0 : at,
                       prefill
                           ? std::span<const std::int32_t>(prompts[static_cast<std::size_t>(r)])
                           : std::span<const std::int32_t>(&tok[static_cast<std::size_t>(r)], 1),
                       true});
    }
    const auto t0 = Clock::now();
    const auto logits = forward_batch(model, ws, std::span<const BatchRow<Slice, Cache>>(batch));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (prefill)
      for (int r = 0; r < n_rows; ++r)
        rows32.emplace_back(logits.begin() + static_cast<std::ptrdiff_t>(r) * c.vocab_size,
                            logits.begin() + static_cast<std::ptrdiff_t>(r + 1) * c.vocab_size);
    return ms;
  };
  std::cerr << "sampling_bench: prefill of " << kRows << " rows\n";
  (void)step_ms(kRows, true, 0);
  nlohmann::json step = nlohmann::json::object();
  double step_1 = 0, step_16 = 0;
  for (const int n : {1, kRows}) {
    for (int s = 0; s < kRows; ++s) cache.rewind(s);
    for (int s = 0; s < kRows; ++s) cache.commit(KvTarget::in_slot(s), kPrompt);
    std::vector<double> ms;
    for (int s = 0; s < o.steps; ++s) ms.push_back(step_ms(n, false, kPrompt + s));
    ms.erase(ms.begin());  // the first warms the workspace
    (n == 1 ? step_1 : step_16) = median(ms);
    step[std::to_string(n) + "_rows_ms"] = median(ms);
    std::cerr << "sampling_bench: decode step of " << n << " rows: " << median(ms) << " ms\n";
  }

  // ---- sampling ---------------------------------------------------------------------------
  const int vocab152 = 151936;
  std::vector<std::vector<float>> rows152;
  for (const auto& r : rows32) {
    std::vector<float> big(static_cast<std::size_t>(vocab152));
    for (int i = 0; i < vocab152; ++i)
      big[static_cast<std::size_t>(i)] = r[static_cast<std::size_t>(i % c.vocab_size)] -
                                         0.25f * static_cast<float>(i / c.vocab_size);
    rows152.push_back(std::move(big));
  }
  // The random model's logits are flat (its weights keep activations near unit variance, so
  // top-p 0.9 keeps thousands of tokens); a trained model's are peaked. The same rows times 4
  // stand in for those: a short kept set, where the passes over the row dominate.
  const auto sharpened = [](std::vector<std::vector<float>> rows) {
    for (auto& r : rows)
      for (float& x : r) x *= 4.0f;
    return rows;
  };
  const std::vector<std::vector<float>> sharp32 = sharpened(rows32), sharp152 = sharpened(rows152);
  struct RowSet {
    const char* logits;
    const std::vector<std::vector<float>>* rows;
  };
  const RowSet sets[] = {{"model", &rows32},
                         {"model", &rows152},
                         {"model x4 (peaked)", &sharp32},
                         {"model x4 (peaked)", &sharp152}};
  nlohmann::json results = nlohmann::json::array();
  for (const Config& cfg : configs()) {
    for (const RowSet& set : sets) {
      const auto* rows = set.rows;
      const int vocab = static_cast<int>((*rows)[0].size());
      const double us = sample_us(cfg, *rows, o.draws, true);
      const double scalar_us = sample_us(cfg, *rows, o.draws, false);
      const double batch16_us = batch_us(cfg, *rows, o.draws / 4, ws);
      const nlohmann::json j = {{"config", cfg.name},
                                {"logits", set.logits},
                                {"vocab", vocab},
                                {"us_per_token", us},
                                {"scalar_passes_us_per_token", scalar_us},
                                {"share_of_step_1_row", us / (step_1 * 1000.0)},
                                {"us_per_16_rows", batch16_us},
                                {"share_of_step_16_rows", batch16_us / (step_16 * 1000.0)}};
      std::cerr << "sampling_bench: " << j.dump() << "\n";
      results.push_back(j);
    }
  }
  const nlohmann::json out = {{"benchmark", "sampling cost per token beside a decode step"},
                              {"model", "random qwen2-155m, bf16, f32 K/V"},
                              {"threads", o.threads},
                              {"cpu_flags", cpu_flags()},
                              {"decode_step", step},
                              {"sampling", results}};
  std::ofstream(o.out) << out.dump(2) << "\n";
  std::cout << out.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "sampling_bench: " << e.what() << "\n";
  return 1;
}
