// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief How much block quantization moves a model's next-token distributions: the model is
///        run at f32 and at each asked storage (q8_0, q4_0, or a 16-bit one) over the same token
///        stream, and the KL divergence of each position's distribution from the f32 one and
///        the top-1 agreement are printed as JSON. benchmarks/llama_cpp/quant_accuracy.py runs it
///        beside llama.cpp's Q8_0/Q4_0 of the same model (docs/performance.md).
///
///   quant_accuracy --model DIR --tokens FILE [--storage q8_0,q4_0] [--context L] [--threads N]
///                  [--isa avx512|avx2|portable] [--prefill]
///
/// FILE is a JSON list of token ids; it is cut into sequences of L tokens (default 512, at most
/// the model's positions), each run from an empty cache at position 0, one token at a time:
/// decode's products (for Q8_0/Q4_0 the integer kernels over 8-bit activations, what llama.cpp
/// computes for every batch). With --prefill, each sequence is one forward with every
/// position's logits instead (the blocked products over dequantized weights, f32 activations).
/// Qwen2/Llama models with head_dim 8, 16 or 64 (the golden and benchmark models).
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/core/storage.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/host_forward.hpp"
#include "support/logit_compare.hpp"

using namespace baton;

namespace {

struct Options {
  std::string model, tokens;
  std::vector<Storage> storages = {Storage::q8_0, Storage::q4_0};
  int context = 512, threads = 0;
  bool decode = true;  ///< false: --prefill
  std::optional<host_simd::Isa> isa;
};

/// Every position's logits of every sequence, one row per position, for the model in S.
template <WeightStorage S, int D>
std::vector<std::vector<float>> run(const Options& o, const std::vector<std::int32_t>& stream,
                                    int context, std::vector<std::string>* fallbacks) {
  const auto model = load_model<host, S>(o.model);
  if (fallbacks) *fallbacks = model.fallback_matrices();
  const ModelConfig& c = model.config();
  const auto slice = LoraSlice<16, host>::none(c);
  KvBuffer<layout::HeadMajor<f32, D>, host> cache(
      c, KvShape{.prefix_capacity = 0, .tail_capacity = context, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  HostContext ctx({.threads = o.threads, .isa = o.isa});
  ws.extras.bind(ctx);
  const KvTarget slot = KvTarget::in_slot(0);
  std::vector<std::vector<float>> rows;
  const auto V = static_cast<std::size_t>(c.vocab_size);
  for (std::size_t s0 = 0; s0 + context <= stream.size(); s0 += context) {
    cache.rewind(0);
    const std::span<const std::int32_t> seq(stream.data() + s0, static_cast<std::size_t>(context));
    if (o.decode) {
      for (int t = 0; t < context; ++t) {
        const auto l = forward(model, ws, slice, cache, slot, t, seq.subspan(t, 1), Logits::last);
        rows.emplace_back(l.begin(), l.end());
      }
    } else {
      const auto l = forward(model, ws, slice, cache, slot, 0, seq, Logits::all);
      for (int t = 0; t < context; ++t)
        rows.emplace_back(l.begin() + t * V, l.begin() + (t + 1) * V);
    }
  }
  return rows;
}

template <int D>
nlohmann::json compare(const Options& o, const std::vector<std::int32_t>& stream, int context) {
  const auto ref = run<f32, D>(o, stream, context, nullptr);
  nlohmann::json results = nlohmann::json::array();
  for (Storage st : o.storages) {
    std::vector<std::string> fallbacks;
    const auto got = [&] {
      switch (st) {
        case Storage::q8_0:
          return run<q8_0, D>(o, stream, context, &fallbacks);
        case Storage::q4_0:
          return run<q4_0, D>(o, stream, context, &fallbacks);
        case Storage::bf16:
          return run<bf16, D>(o, stream, context, &fallbacks);
        case Storage::f16:
          return run<f16, D>(o, stream, context, &fallbacks);
        case Storage::f32:
          break;
      }
      return run<f32, D>(o, stream, context, &fallbacks);
    }();
    test::LogitComparison cmp;
    for (std::size_t i = 0; i < ref.size(); ++i) cmp.add(ref[i], got[i]);
    const test::DistributionGap g = cmp.summary();
    results.push_back({{"storage", storage_name(st)},
                       {"kl_mean", g.kl_mean},
                       {"kl_median", g.kl_median},
                       {"kl_p99", g.kl_p99},
                       {"kl_max", g.kl_max},
                       {"top1", g.top1},
                       {"fallback_matrices", fallbacks}});
  }
  return results;
}

int usage() {
  std::cerr << "usage: quant_accuracy --model DIR --tokens FILE [--storage q8_0,q4_0] "
               "[--context L] [--threads N] [--isa avx512|avx2|portable] [--prefill]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--model") {
      o.model = next();
    } else if (a == "--tokens") {
      o.tokens = next();
    } else if (a == "--context") {
      o.context = std::stoi(next());
    } else if (a == "--threads") {
      o.threads = std::stoi(next());
    } else if (a == "--prefill") {
      o.decode = false;
    } else if (a == "--isa") {
      const std::string v = next();
      if (v == "avx512") o.isa = host_simd::Isa::avx512;
      if (v == "avx2") o.isa = host_simd::Isa::avx2;
      if (v == "portable") o.isa = host_simd::Isa::portable;
      if (!o.isa) return usage();
    } else if (a == "--storage") {
      o.storages.clear();
      const std::string list = next();
      for (std::size_t b = 0; b < list.size();) {
        const std::size_t e = std::min(list.find(',', b), list.size());
        const auto st = parse_storage(std::string_view(list).substr(b, e - b));
        if (!st) return usage();
        o.storages.push_back(*st);
        b = e + 1;
      }
    } else {
      return usage();
    }
  }
  if (o.model.empty() || o.tokens.empty() || o.context < 1) return usage();
  std::ifstream in(o.tokens);
  const std::vector<std::int32_t> stream =
      nlohmann::json::parse(in).get<std::vector<std::int32_t>>();
  const ModelConfig cfg = io::load_model_config(o.model);
  const int context = static_cast<int>(std::min<long long>(o.context, cfg.max_positions()));
  BATON_CHECK(stream.size() >= static_cast<std::size_t>(context), usage_error, o.tokens,
              ": fewer tokens than one sequence of ", context);
  nlohmann::json out{{"model", o.model},
                     {"context", context},
                     {"positions", stream.size() / context * context},
                     {"mode", o.decode ? "decode" : "prefill"},
                     {"kernels", host_simd::isa_name(o.isa.value_or(host_simd::best_isa()))}};
  switch (cfg.head_dim) {
    case 8:
      out["results"] = compare<8>(o, stream, context);
      break;
    case 16:
      out["results"] = compare<16>(o, stream, context);
      break;
    case 64:
      out["results"] = compare<64>(o, stream, context);
      break;
    default:
      BATON_FAIL(config_error, o.model, ": head_dim ", cfg.head_dim,
                 " is not built into quant_accuracy (8, 16, 64)");
  }
  std::cout << out.dump(2) << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "quant_accuracy: " << e.what() << "\n";
  return 1;
}
