// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief CUDA decode benchmark: prefill and decode tokens/s of a bf16 model on the GPU, the
///        weight bytes a decode step reads, the GB/s that achieves against the device's copy
///        bandwidth measured in the same run, and the host waits per step. JSON on stdout.
///        Exits 77 without a GPU. See benchmarks/README.md.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/io/hf_config.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/cuda_forward.cuh"
#include "random_model.hpp"

namespace fs = std::filesystem;
using baton::bf16;
using baton::CudaContext;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/// Device-to-device copy bandwidth (read + write bytes per second), median of `runs`.
double copy_bandwidth(CudaContext& ctx, std::size_t mib, int runs) {
  const std::size_t bytes = mib << 20;
  baton::DeviceBuffer<std::byte> a(bytes), b(bytes);
  std::vector<double> gbs;
  for (int r = 0; r <= runs; ++r) {
    const auto t0 = Clock::now();
    BATON_CUDA_CHECK(cudaMemcpyAsync(b.data().get(), a.data().get(), bytes,
                                     cudaMemcpyDeviceToDevice, ctx.stream()));
    ctx.synchronize();
    if (r > 0) gbs.push_back(2.0 * bytes / since(t0) / 1e9);
  }
  return median(gbs);
}

}  // namespace

int main(int argc, char** argv) try {
  if (!baton::cuda_device_available()) {
    std::puts("cuda_decode_bench: no CUDA device visible (exit 77)");
    return 77;
  }
  baton::bench::RandomModelShape shape;
  std::string model_dir, work_dir;
  int runs = 5, prompt = 32, decode = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] {
      BATON_CHECK(i + 1 < argc, baton::usage_error, a, " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--model")
      model_dir = next();
    else if (a == "--work-dir")
      work_dir = next();
    else if (a == "--runs")
      runs = std::stoi(next());
    else if (a == "--prompt")
      prompt = std::stoi(next());
    else if (a == "--decode")
      decode = std::stoi(next());
    else if (a == "--layers")
      shape.layers = std::stoi(next());
    else if (a == "--hidden")
      shape.hidden = std::stoi(next());
    else if (a == "--ffn")
      shape.ffn = std::stoi(next());
    else if (a == "--vocab")
      shape.vocab = std::stoi(next());
    else {
      std::cerr << "usage: cuda_decode_bench [--model DIR] [--work-dir DIR] [--runs N] [--prompt N]"
                   " [--decode N] [--layers N] [--hidden N] [--ffn N] [--vocab N]\n";
      return 2;
    }
  }
  nlohmann::json out;
  fs::path dir = model_dir, written;
  if (dir.empty()) {
    written = (work_dir.empty() ? fs::temp_directory_path() : fs::path(work_dir)) /
              ("baton_cuda_decode_bench_" + std::to_string(::getpid()));
    const auto t0 = Clock::now();
    out["model_file_bytes"] = baton::bench::write_random_model(shape, written);
    out["model_write_s"] = since(t0);
    dir = written;
  }
  CudaContext ctx;
  int device = 0;
  cudaDeviceProp prop{};
  BATON_CUDA_CHECK(cudaGetDevice(&device));
  BATON_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  out["device"] = prop.name;

  auto t0 = Clock::now();
  const auto model = baton::load_model<baton::cuda, bf16>(dir);
  out["load_s"] = since(t0);
  const baton::ModelConfig& c = model.config();
  BATON_CHECK(c.head_dim == 64, baton::config_error,
              "cuda_decode_bench instantiates head_dim 64 only; ", dir.string(), " has ",
              c.head_dim);
  const auto slice = baton::LoraSlice<16, baton::cuda>::none(c);
  baton::KvBuffer<baton::layout::HeadMajor<bf16, 64>, baton::cuda> cache(
      c, {.prefix_capacity = 0, .tail_capacity = prompt + decode, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  baton::Workspace<baton::cuda> ws;
  ws.extras.bind(ctx);
  std::vector<std::int32_t> ids(prompt);
  for (int i = 0; i < prompt; ++i) ids[i] = (i * 7919 + 13) % c.vocab_size;
  const auto slot = baton::KvTarget::in_slot(0);
  using Ops = baton::BackendOps<baton::cuda>;

  std::vector<double> prefill_tps, decode_tps, waits_per_step;
  for (int r = 0; r <= runs; ++r) {  // run 0 warms up (allocations, cuBLAS heuristics)
    cache.rewind(0);
    t0 = Clock::now();
    auto logits = baton::forward(model, ws, slice, cache, slot, 0,
                                 std::span<const std::int32_t>(ids), baton::Logits::last);
    std::int32_t tok = Ops::argmax(logits);  // waits: the prefill is done
    const double prefill_s = since(t0);
    const long w0 = ctx.host_waits();
    t0 = Clock::now();
    for (int s = 0; s < decode; ++s) {
      logits = baton::forward(model, ws, slice, cache, slot, prompt + s,
                              std::span<const std::int32_t>(&tok, 1), baton::Logits::last);
      tok = Ops::argmax(logits);
    }
    const double decode_s = since(t0);
    if (r == 0) continue;
    prefill_tps.push_back(prompt / prefill_s);
    decode_tps.push_back(decode / decode_s);
    waits_per_step.push_back(double(ctx.host_waits() - w0) / decode);
  }
  const double bytes = static_cast<double>(model.weight_bytes());
  const double dec = median(decode_tps);
  const double bw = copy_bandwidth(ctx, 1024, runs);
  out["model"] = {
      {"dir", dir.string()},    {"random", !written.empty()}, {"hidden", c.hidden_size},
      {"layers", c.num_layers}, {"heads", c.num_heads},       {"kv_heads", c.num_kv_heads},
      {"head_dim", c.head_dim}, {"ffn", c.intermediate_size}, {"vocab", c.vocab_size}};
  out["prompt_tokens"] = prompt;
  out["decode_steps"] = decode;
  out["runs"] = runs;
  out["storage"] = "bf16";
  out["weight_bytes_per_step"] = model.weight_bytes();
  out["prefill_tokens_per_s"] = median(prefill_tps);
  out["decode_tokens_per_s"] = dec;
  out["decode_tokens_per_s_runs"] = decode_tps;
  out["host_waits_per_decode_step"] = median(waits_per_step);
  out["achieved_gb_per_s"] = bytes * dec / 1e9;
  out["device_copy_gb_per_s"] = bw;
  out["ratio_vs_copy"] = bytes * dec / 1e9 / bw;
  if (!written.empty()) fs::remove_all(written);
  std::cout << out.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "cuda_decode_bench: " << e.what() << "\n";
  return 1;
}
