// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton-cuda generate`: `baton generate` on the CUDA backend, for the GPU check (the
///        transformers + peft comparison, tests/reference/hf_compare.py, runs it unchanged
///        through --baton). Same options and output as `baton generate` (docs/cli.md), Qwen2 /
///        Llama models with f32 or bf16 weights and head_dim 8, 16, 64 or 128. The `baton`
///        program itself stays on the host backend until a GPU check has passed.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "../args.hpp"
#include "baton/core/dispatch.hpp"
#include "baton/io/hf_config.hpp"
#include "baton/kv/kv_buffer.hpp"
#include "baton/model/cuda_forward.cuh"
#include "baton/model/decode.hpp"

namespace {

namespace cli = baton::cli;

struct Options {
  std::string model, adapter;
  std::vector<std::int32_t> ids;
  int max_new = 0;
  bool ignore_eos = false, json = false, logits = false;
};

Options parse(int argc, char** argv) {
  Options o;
  cli::SeenOptions seen;
  bool ids = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    seen.once(a);
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw cli::ArgError{std::string(a) + " needs a value"};
      return cli::non_empty(a, argv[++i]);
    };
    if (a == "--model")
      o.model = value();
    else if (a == "--adapter")
      o.adapter = value();
    else if (a == "--ids")
      o.ids = cli::parse_ids(value()), ids = true;
    else if (a == "--max-new")
      o.max_new = cli::parse_int<int>(value(), "--max-new");
    else if (a == "--ignore-eos")
      o.ignore_eos = true;
    else if (a == "--json")
      o.json = true;
    else if (a == "--logits")
      o.logits = true;
    else
      throw cli::ArgError{"unknown option '" + std::string(a) + "'"};
  }
  if (o.model.empty() || !ids || o.max_new < 1)
    throw cli::ArgError{"--model DIR, --ids LIST and --max-new N >= 1 are required"};
  if (o.logits && !o.json) throw cli::ArgError{"--logits needs --json"};
  return o;
}

/// Keeps the first step's logits (downloaded: one counted wait).
struct KeepFirst {
  std::vector<float>* out;
  template <class View>
  std::optional<std::int32_t> before(const View&) {
    return std::nullopt;
  }
  template <class View>
  void after(const View& v, std::int32_t) {
    if (out && v.step == 0) *out = baton::download_logits(v.logits);
  }
};

template <baton::StorageType S, int D>
nlohmann::json generate(const Options& o, const std::vector<std::int32_t>& stop) {
  using B = baton::cuda;
  using Slice = baton::LoraSlice<baton::kRuntimeRankBound, B>;
  using Model = baton::BaseModel<B, S>;
  using Cache = baton::KvBuffer<baton::layout::HeadMajor<baton::f32, D>, B>;
  const auto model = baton::load_model<B, S>(o.model);
  const auto slice =
      o.adapter.empty() ? Slice::none(model.config()) : Slice::load(o.adapter, model);
  const int n = static_cast<int>(o.ids.size());
  Cache cache(model.config(), {.prefix_capacity = 0, .tail_capacity = n + o.max_new, .slots = 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  baton::Workspace<B> ws;
  const baton::DecodeOptions opt{o.max_new, stop};
  baton::Decoder<Model, Slice, Cache> d(model, slice, cache, ws, baton::KvTarget::in_slot(0), opt);
  d.prefill(std::span<const std::int32_t>(o.ids), 0);
  std::vector<float> first;
  d.run(KeepFirst{o.logits ? &first : nullptr});
  nlohmann::json j = {{"ids", d.result().ids}};
  if (o.logits) j["logits"] = first;
  return j;
}

template <baton::StorageType S>
nlohmann::json with_head_dim(const Options& o, int head_dim,
                             const std::vector<std::int32_t>& stop) {
  switch (head_dim) {
    case 8:
      return generate<S, 8>(o, stop);
    case 16:
      return generate<S, 16>(o, stop);
    case 64:
      return generate<S, 64>(o, stop);
    case 128:
      return generate<S, 128>(o, stop);
  }
  BATON_FAIL(baton::config_error, "baton-cuda: head_dim ", head_dim,
             " is not built into this program (8, 16, 64, 128)");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "generate") {
    std::cerr << "usage: baton-cuda generate --model DIR [--adapter DIR] --ids 1,2,3 --max-new N"
                 " [--ignore-eos] [--json] [--logits]\n";
    return 2;
  }
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const cli::ArgError& e) {
    std::cerr << "baton-cuda generate: " << e.message << "\n";
    return 2;
  }
  try {
    if (!baton::cuda_device_available()) {
      std::cerr << "baton-cuda: no CUDA device visible\n";
      return 77;
    }
    const baton::ModelConfig cfg = baton::io::load_model_config(o.model);
    BATON_CHECK(cfg.architecture != baton::Architecture::qwen3, baton::config_error,
                "baton-cuda: Qwen3 models are not built into this program");
    const std::vector<std::int32_t> stop =
        o.ignore_eos ? std::vector<std::int32_t>{} : cfg.eos_token_ids;
    const baton::dtype t = baton::stored_dtype(o.model);
    BATON_CHECK(t != baton::dtype::f16, baton::config_error,
                "baton-cuda: f16 model files are not built into this program (f32, bf16)");
    const nlohmann::json j = t == baton::dtype::f32
                                 ? with_head_dim<baton::f32>(o, cfg.head_dim, stop)
                                 : with_head_dim<baton::bf16>(o, cfg.head_dim, stop);
    if (o.json) {
      std::cout << j.dump() << "\n";
    } else {
      const auto ids = j["ids"].get<std::vector<std::int32_t>>();
      for (std::size_t i = 0; i < ids.size(); ++i) std::cout << (i ? " " : "") << ids[i];
      std::cout << "\n";
    }
    return std::cout ? 0 : 1;
  } catch (const baton::error& e) {
    std::cerr << "baton-cuda: " << e.what() << "\n";
    return 1;
  }
}
