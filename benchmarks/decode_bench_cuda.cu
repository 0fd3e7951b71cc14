// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `decode_bench --backend cuda`: batch-1 decode on the GPU for Qwen2.5-1.5B- and
///        Llama-3-8B-shaped models whose random bf16 weights are made on the device (a
///        hash-based fill kernel; no files). Per shape: ms per token (median), the weight bytes
///        a token reads and the bytes/s that achieves against a read-only streaming kernel
///        measured in the same run over as many bytes, per GEMV matrix shape the bytes in
///        flight per SM with the fraction of that bandwidth they predict and the one measured
///        (decode_bench_gemv.cuh), kernels launched per token, prefill tokens/s, host waits
///        per generation, and a three-stage relay's latency with its host waits per stage run;
///        the issue's targets (>= 75% of the streaming bandwidth on the 8B shape, <= 1 host
///        wait per stage run) as PASSED/FAILED fields. JSON on stdout.
///        See benchmarks/README.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/kv/kv_buffer.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/relay/relay.hpp"
#include "cuda_event_timer.cuh"
#include "decode_bench_cuda.hpp"
#include "decode_bench_gemv.cuh"

namespace {

using namespace baton;
using Model = BaseModel<baton::cuda, bf16>;  // family::Qwen2 runs Qwen2 and Llama
using Layer = Model::layer_weights;
constexpr int kHeadDim = 128;  // both shapes
using Cache = KvBuffer<layout::HeadMajor<bf16, kHeadDim>, baton::cuda>;
using Slice = LoraSlice<16, baton::cuda>;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// ---- a model made on the device --------------------------------------------------------------

/// The public shapes of the two models the issue names (config.json values).
struct Shape {
  std::string_view name;
  int hidden, layers, heads, kv_heads, ffn, vocab;
  bool tied, bias;  ///< tie_word_embeddings; q/k/v biases (Qwen2 has them, Llama not)
  double rope_theta;
  double bandwidth_target;  ///< the issue's share of the streaming bandwidth (0: none)
};
constexpr Shape kShapes[] = {
    {"qwen2.5-1.5b", 1536, 28, 12, 2, 8960, 151936, true, true, 1e6, 0.0},
    {"llama-3-8b", 4096, 32, 32, 8, 14336, 128256, false, false, 5e5, 0.75},
};

ModelConfig config_of(const Shape& s) {
  ModelConfig c;
  c.architecture = s.bias ? Architecture::qwen2 : Architecture::llama;
  c.architecture_name = s.bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
  c.vocab_size = s.vocab;
  c.hidden_size = s.hidden;
  c.intermediate_size = s.ffn;
  c.num_layers = s.layers;
  c.num_heads = s.heads;
  c.num_kv_heads = s.kv_heads;
  c.head_dim = kHeadDim;
  c.rope_theta = s.rope_theta;
  c.attention_bias = s.bias;
  c.tie_word_embeddings = s.tied;
  c.max_position_embeddings = 32768;
  c.torch_dtype = "bfloat16";
  c.validate(s.name);
  return c;
}

/// splitmix64's finalizer over (seed, index): every element gets its own value, whatever the
/// grid, so a fill is the same on every run and device.
__device__ inline float hashed_uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * 0x1p-23f - 1.0f;  // [-1, 1)
}

/// out[i] = constant + amplitude * uniform(-1, 1), narrowed to T.
template <class T>
__global__ void fill_kernel(T* out, std::size_t n, std::uint64_t seed, float constant,
                            float amplitude) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const float v = constant + amplitude * hashed_uniform(seed, i);
    if constexpr (std::is_same_v<T, bf16>) {
      out[i] = to_bf16(v);
    } else {
      out[i] = v;
    }
  }
}

template <class T>
DeviceBuffer<T> filled(std::size_t n, std::uint64_t seed, float constant, float amplitude,
                       cudaStream_t stream) {
  DeviceBuffer<T> b(n);
  if (n) {
    fill_kernel<T><<<1024, 256, 0, stream>>>(b.data().get(), n, seed, constant, amplitude);
    BATON_CUDA_CHECK(cudaGetLastError());
  }
  return b;
}

/// The model of shape `s` with random weights (uniform, amplitude sqrt(3 / fan_in): unit
/// variance in, unit variance out), made on the device.
Model make_model(const Shape& s, CudaContext& ctx) {
  const ModelConfig c = config_of(s);
  const auto z = [](long long v) { return static_cast<std::size_t>(v); };
  const auto amp = [](int in) { return static_cast<float>(std::sqrt(3.0 / in)); };
  const std::size_t H = z(c.hidden_size), F = z(c.intermediate_size), V = z(c.vocab_size),
                    QKV = z(c.q_dim() + 2 * c.kv_dim());
  std::uint64_t seed = 1;
  cudaStream_t st = ctx.stream();
  auto embed = filled<bf16>(V * H, seed++, 0, 1.7f, st);
  DeviceBuffer<bf16> head;
  if (!c.tie_word_embeddings) head = filled<bf16>(V * H, seed++, 0, amp(c.hidden_size), st);
  auto norm = filled<float>(H, seed++, 1, 0, st);
  std::vector<Layer> layers;
  for (int i = 0; i < c.num_layers; ++i) {
    Layer w;
    w.attn_norm = filled<float>(H, seed++, 1, 0, st);
    w.mlp_norm = filled<float>(H, seed++, 1, 0, st);
    w.wqkv = filled<bf16>(QKV * H, seed++, 0, amp(c.hidden_size), st);
    if (c.attention_bias) w.bqkv = filled<float>(QKV, seed++, 0, 0.1f, st);
    w.wo = filled<bf16>(H * z(c.q_dim()), seed++, 0, amp(c.q_dim()), st);
    w.wgate_up = filled<bf16>(2 * F * H, seed++, 0, amp(c.hidden_size), st);
    w.wdown = filled<bf16>(H * F, seed++, 0, 0.5f * amp(c.intermediate_size), st);
    layers.push_back(std::move(w));
  }
  ctx.synchronize();  // the fills are done before anything reads the weights
  return Model::from_weights(c, std::string(s.name) + " (random, made on the device)",
                             std::move(embed), std::move(head), std::move(norm), std::move(layers));
}

// ---- the bandwidth reference: a read-only streaming kernel ---------------------------------

/// Reads n 16-byte words once (four independent loads in flight per thread); the xor of what
/// it read decides a write that practically never happens, so the loads cannot be dropped.
__global__ void stream_read_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride),
                d = __ldcs(p + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^
           d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = __ldcs(p + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9E3779B9u) atomicAdd(sink, 1u);
}

/// Bytes per second the streaming kernel reads from a buffer of `bytes`, median of `runs`
/// (after one warm-up), timed with events on the context's stream.
double stream_read_bytes_per_s(CudaContext& ctx, std::size_t bytes, int runs) {
  const std::size_t words = bytes / sizeof(uint4);
  DeviceBuffer<uint4> buf(words);
  DeviceBuffer<unsigned> sink(1);
  int device = 0, sms = 0;
  BATON_CUDA_CHECK(cudaGetDevice(&device));
  BATON_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const double seconds = bench::median_event_seconds(ctx, runs, [&] {
    stream_read_kernel<<<sms * 8, 256, 0, ctx.stream()>>>(buf.data().get(), words,
                                                          sink.data().get());
    BATON_CUDA_CHECK(cudaGetLastError());
  });
  return static_cast<double>(words * sizeof(uint4)) / seconds;
}

// ---- measurements ----------------------------------------------------------------------------

struct Options {
  std::vector<const Shape*> shapes;
  int runs = 5, prompt = 32, decode = 64, relay_runs = 5;
};

std::vector<std::int32_t> prompt_ids(int n, int vocab, int salt) {
  std::vector<std::int32_t> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = static_cast<std::int32_t>((i * 7919 + 13 + salt) % vocab);
  return ids;
}

/// Kernel nodes of one single-token forward, captured from the context's stream into a graph
/// (launched nowhere). Counts what the GPU runs per decode step without touching the library;
/// the choice of the next token (argmax or the device step) comes on top.
nlohmann::json kernels_per_forward(const Model& model, Workspace<baton::cuda>& ws,
                                   const Slice& slice, Cache& cache, int position,
                                   CudaContext& ctx) {
  cache.rewind(0);
  const std::int32_t tok = 1;
  cudaGraph_t graph = nullptr;
  BATON_CUDA_CHECK(cudaStreamBeginCapture(ctx.stream(), cudaStreamCaptureModeRelaxed));
  try {
    (void)forward(model, ws, slice, cache, KvTarget::in_slot(0), position,
                  std::span<const std::int32_t>(&tok, 1), Logits::last);
  } catch (const std::exception& e) {
    (void)cudaStreamEndCapture(ctx.stream(), &graph);
    if (graph) (void)cudaGraphDestroy(graph);
    return {{"forward", nullptr}, {"why_not", e.what()}};
  }
  BATON_CUDA_CHECK(cudaStreamEndCapture(ctx.stream(), &graph));
  std::size_t n = 0;
  BATON_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  BATON_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &n));
  long kernels = 0, other = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    BATON_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    (type == cudaGraphNodeTypeKernel ? kernels : other) += 1;
  }
  (void)cudaGraphDestroy(graph);
  return {{"forward", kernels}, {"other_nodes", other}, {"how", "stream capture of one forward"}};
}

constexpr const char* kStageNames[] = {"extract", "reason", "verify"};

nlohmann::json bench_shape(const Shape& s, const Options& o, CudaContext& ctx) {
  nlohmann::json out = {{"name", s.name}};
  auto t0 = std::chrono::steady_clock::now();
  const auto since = [](auto t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  const Model model = make_model(s, ctx);
  out["make_weights_s"] = since(t0);
  const ModelConfig& c = model.config();
  out["model"] = {{"hidden", c.hidden_size},
                  {"layers", c.num_layers},
                  {"heads", c.num_heads},
                  {"kv_heads", c.num_kv_heads},
                  {"head_dim", c.head_dim},
                  {"ffn", c.intermediate_size},
                  {"vocab", c.vocab_size},
                  {"tied", c.tie_word_embeddings},
                  {"attention_bias", c.attention_bias},
                  {"storage", "bf16"},
                  {"kv", "bf16"}};
  const double bytes = static_cast<double>(model.weight_bytes());
  out["weight_bytes_per_token"] = model.weight_bytes();

  const Slice slice = Slice::none(c);
  Cache cache(c, {.prefix_capacity = 0, .tail_capacity = o.prompt + o.decode + 1, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<baton::cuda> ws;
  ws.extras.bind(ctx);
  const std::vector<std::int32_t> prompt = prompt_ids(o.prompt, c.vocab_size, 0);
  const DecodeOptions opt{o.decode, {}};  // no stop ids: every run decodes o.decode tokens

  std::vector<double> prefill_tps, ms_per_token, waits;
  int result_waits = -1;
  for (int r = 0; r <= o.runs; ++r) {  // run 0 warms up (workspace growth, cuBLAS heuristics)
    cache.rewind(0);
    Decoder<Model, Slice, Cache> d(model, slice, cache, ws, KvTarget::in_slot(0), opt);
    ctx.synchronize();
    t0 = std::chrono::steady_clock::now();
    d.prefill(std::span<const std::int32_t>(prompt), 0);
    ctx.synchronize();  // prefill time alone (one extra wait, outside the decode's count)
    const double prefill_s = since(t0);
    const long w0 = ctx.host_waits();
    t0 = std::chrono::steady_clock::now();
    d.run();
    const double decode_s = since(t0);
    const long w = ctx.host_waits() - w0;
    BATON_CHECK(static_cast<int>(d.result().ids.size()) == o.decode, usage_error,
                "decode_bench: the loop produced ", d.result().ids.size(), " tokens, not ",
                o.decode);
    if (r == 0) continue;
    prefill_tps.push_back(o.prompt / prefill_s);
    ms_per_token.push_back(1e3 * decode_s / o.decode);
    waits.push_back(static_cast<double>(w));
    result_waits = d.result().host_waits;
  }
  const double ms = median(ms_per_token);
  const double achieved = bytes / (ms * 1e-3);
  const double stream = stream_read_bytes_per_s(ctx, model.weight_bytes(), o.runs);
  out["prefill_tokens_per_s"] = median(prefill_tps);
  out["decode_ms_per_token"] = ms;
  out["decode_ms_per_token_runs"] = ms_per_token;
  out["decode_tokens_per_s"] = 1e3 / ms;
  out["achieved_bytes_per_s"] = achieved;
  out["stream_read_bytes_per_s"] = stream;
  out["stream_read_bytes"] = model.weight_bytes();
  out["ratio_vs_stream_read"] = achieved / stream;
  // Where the time goes past the roofline (reading every weight once at the streaming rate).
  const double roofline_ms = 1e3 * bytes / stream;
  out["roofline_ms_per_token"] = roofline_ms;
  out["gap_ms_per_token"] = ms - roofline_ms;
  // Per matrix shape: bytes in flight per SM, the fraction they predict, the one measured.
  out["gemv"] = bench::gemv_report(model, ctx, stream, o.runs);
  out["host_waits_per_generation"] = median(waits);
  out["host_waits_per_token"] = median(waits) / o.decode;
  out["decode_result_host_waits"] = result_waits;
  out["kernels_per_token"] = kernels_per_forward(model, ws, slice, cache, o.prompt, ctx);

  // A three-stage relay on the same weights: extract -> reason -> verify with pre-warmed
  // prefixes, each stage reading the request and/or the stage before it; one cycle.
  using namespace wire;
  const KvShape shape{.prefix_capacity = 64, .tail_capacity = 256, .slots = 1};
  const auto pre = [&](int salt) { return prompt_ids(48, c.vocab_size, salt); };
  auto extract = make_stage<Cache>(kStageNames[0], model, Slice::none(c), shape, pre(1),
                                   input(request), StageLimits{.max_new = 32});
  auto reason = make_stage<Cache>(kStageNames[1], model, Slice::none(c), shape, pre(2),
                                  input(request, wire::out<0>), StageLimits{.max_new = 64});
  auto verify = make_stage<Cache>(kStageNames[2], model, Slice::none(c), shape, pre(3),
                                  input(wire::out<1>), StageLimits{.max_new = 4});
  // One context for the relay (as a run-time relay has): its counted waits are the ground
  // truth beside what each stage run reports.
  CudaContext relay_ctx;
  const auto bind = [&](auto& stage) {
    for (auto& w : stage.workspaces()) w.extras.bind(relay_ctx);
  };
  bind(extract);
  bind(reason);
  bind(verify);
  Relay relay{extract, reason, verify};
  relay.prewarm();
  const std::vector<std::int32_t> question = prompt_ids(24, c.vocab_size, 7);
  std::vector<double> totals, relay_waits;
  std::vector<std::vector<double>> stage_ms(3);
  std::vector<int> stage_waits(3, 0), stage_tokens(3, 0);
  for (int r = 0; r <= o.relay_runs; ++r) {
    const long w0 = relay_ctx.host_waits();
    const RelayResult res = relay.run(question, {.max_cycles = 1});
    if (r == 0) continue;
    totals.push_back(res.total_ms);
    relay_waits.push_back(static_cast<double>(relay_ctx.host_waits() - w0));
    for (const StageRun& run : res.runs) {
      stage_ms[run.stage].push_back(run.ms);
      stage_waits[run.stage] = std::max(stage_waits[run.stage], run.host_waits);
      stage_tokens[run.stage] = static_cast<int>(run.ids.size());
    }
  }
  nlohmann::json stages = nlohmann::json::array();
  int most_waits = 0;
  for (int i = 0; i < 3; ++i) {
    stages.push_back({{"name", kStageNames[i]},
                      {"median_ms", median(stage_ms[i])},
                      {"tokens", stage_tokens[i]},
                      {"host_waits_per_run_max", stage_waits[i]}});
    most_waits = std::max(most_waits, stage_waits[i]);
  }
  out["relay"] = {{"stages", stages},
                  {"median_total_ms", median(totals)},
                  {"context_host_waits_per_run", median(relay_waits)},
                  {"runs", o.relay_runs}};

  // The issue's targets.
  nlohmann::json targets = nlohmann::json::object();
  if (s.bandwidth_target > 0)
    targets["bandwidth"] = {{"want_ratio_vs_stream_read_at_least", s.bandwidth_target},
                            {"got", achieved / stream},
                            {"passed", achieved / stream >= s.bandwidth_target}};
  // A stage run is one generation: at most one wait each, counted by the context too.
  const bool waits_ok = median(waits) <= 1 && most_waits <= 1 && median(relay_waits) <= 3;
  targets["host_waits"] = {{"want_per_stage_run_at_most", 1},
                           {"got_generation", median(waits)},
                           {"got_relay_stage_max", most_waits},
                           {"got_relay_context_per_run", median(relay_waits)},
                           {"passed", waits_ok}};
  out["targets"] = targets;
  return out;
}

int usage() {
  std::cerr
      << "usage: decode_bench --backend cuda [--shape qwen2.5-1.5b|llama-3-8b|all] [--runs N]\n"
         "                    [--prompt N] [--decode N] [--relay-runs N]\n";
  return 2;
}

}  // namespace

int decode_bench_cuda(int argc, char** argv) try {
  Options o;
  std::string shape = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string v = argv[++i];
    const auto count = [&] {
      const int n = std::stoi(v);
      if (n < 1) throw std::invalid_argument(std::string(a) + " must be at least 1");
      return n;
    };
    if (a == "--shape")
      shape = v;
    else if (a == "--runs")
      o.runs = count();
    else if (a == "--prompt")
      o.prompt = count();
    else if (a == "--decode")
      o.decode = count();
    else if (a == "--relay-runs")
      o.relay_runs = count();
    else
      return usage();
  }
  for (const Shape& s : kShapes)
    if (shape == "all" || shape == s.name) o.shapes.push_back(&s);
  if (o.shapes.empty()) return usage();
  if (const CudaStatus status = cuda_status(); !status.usable()) {
    std::cerr << "decode_bench --backend cuda: " << status.line() << " (exit 77)\n";
    return 77;
  }
  CudaContext ctx;
  int device = 0;
  cudaDeviceProp prop{};
  BATON_CUDA_CHECK(cudaGetDevice(&device));
  BATON_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  nlohmann::json out = {{"backend", "cuda"},        {"device", prop.name},
                        {"runs", o.runs},           {"prompt_tokens", o.prompt},
                        {"decode_steps", o.decode}, {"shapes", nlohmann::json::array()}};
  bool passed = true;
  for (const Shape* s : o.shapes) {
    std::cerr << "decode_bench: " << s->name << "\n";
    out["shapes"].push_back(bench_shape(*s, o, ctx));
    for (const auto& [name, t] : out["shapes"].back()["targets"].items())
      passed = passed && t["passed"].get<bool>();
  }
  out["targets_passed"] = passed;
  std::cout << out.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "decode_bench --backend cuda: " << e.what() << "\n";
  return 1;
}
