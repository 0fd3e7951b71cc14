// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// BaseModel::from_weights (weights already in backend memory, as the benchmark makes them)
// against two independent references on tiny random models: the naive double-precision
// forward (tests/reference) on the same values, and load_model on the same values written as
// files. The fused layouts (q|k|v rows, gate|up rows) are built here from the per-projection
// tensors, as family/qwen2.hpp documents them, not through the loader. Then the shape checks:
// each wrong buffer is a shape_error naming the tensor and both sizes; a bad config is a
// config_error naming the source.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "baton/model/decode.hpp"
#include "reference/naive_model.hpp"
#include "support/expect_error.hpp"
#include "support/host_model.hpp"
#include "support/tiny_model.hpp"

using namespace baton;
using namespace baton::test;

namespace {

using Model = BaseModel<host, f32>;

HostBuffer<float> buf(const std::vector<float>& v) { return host::upload(std::span(v)); }

/// Rows of `parts` stacked in order (each a row-major [rows, cols] matrix or a vector).
std::vector<float> stack(std::initializer_list<const std::vector<float>*> parts) {
  std::vector<float> out;
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  return out;
}

/// The layers of `tm` in the family's fused layout, made from the per-projection tensors.
std::vector<Model::layer_weights> layers_of(const TinyModel& tm) {
  std::vector<Model::layer_weights> layers;
  for (int i = 0; i < tm.cfg.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const auto t = [&](const std::string& name) { return &tm.tensors.at(p + name); };
    Model::layer_weights w;
    w.attn_norm = buf(*t("input_layernorm.weight"));
    w.wqkv = buf(stack({t("self_attn.q_proj.weight"), t("self_attn.k_proj.weight"),
                        t("self_attn.v_proj.weight")}));
    if (tm.cfg.attention_bias)
      w.bqkv = buf(stack(
          {t("self_attn.q_proj.bias"), t("self_attn.k_proj.bias"), t("self_attn.v_proj.bias")}));
    w.wo = buf(*t("self_attn.o_proj.weight"));
    w.mlp_norm = buf(*t("post_attention_layernorm.weight"));
    w.wgate_up = buf(stack({t("mlp.gate_proj.weight"), t("mlp.up_proj.weight")}));
    w.wdown = buf(*t("mlp.down_proj.weight"));
    layers.push_back(std::move(w));
  }
  return layers;
}

Model from_tiny(const TinyModel& tm) {
  HostBuffer<float> head;
  if (!tm.cfg.tie_word_embeddings) head = buf(tm.tensors.at("lm_head.weight"));
  return Model::from_weights(tm.cfg, "tiny (in memory)",
                             buf(tm.tensors.at("model.embed_tokens.weight")), std::move(head),
                             buf(tm.tensors.at("model.norm.weight")), layers_of(tm));
}

/// Every row of logits for `ids` through `model` (no adapter), from position 0.
std::vector<float> all_logits(const Model& model, const std::vector<std::int32_t>& ids) {
  Workspace<host> ws;
  KvBuffer<layout::HeadMajor<f32, 8>, host> cache(
      model.config(), {.prefix_capacity = 0, .tail_capacity = 32, .slots = 1});
  cache.reset_prefix();  // an empty prefix
  cache.freeze_prefix();
  cache.rewind(0);
  const auto l = forward(model, ws, LoraSlice<4, host>::none(model.config()), cache,
                         KvTarget::in_slot(0), 0, std::span(ids), Logits::all);
  return {l.begin(), l.end()};
}

}  // namespace

TEST_CASE("BaseModel::from_weights = the naive reference and load_model on the same values") {
  for (const bool tie : {false, true}) {
    for (const Architecture arch : {Architecture::qwen2, Architecture::llama}) {
      CAPTURE(tie);
      CAPTURE(static_cast<int>(arch));
      TinySpec s;
      s.arch = arch;
      s.tie = tie;
      s.seed = 7 + (tie ? 1 : 0);
      const TinyModel tm = make_tiny_model(s);
      const Model made = from_tiny(tm);
      CHECK(made.source() == "tiny (in memory)");
      CHECK(made.config().num_layers == tm.cfg.num_layers);
      const std::vector<std::int32_t> ids = test_prompt(tm.cfg.vocab_size, 9, 3);
      const std::vector<float> got = all_logits(made, ids);

      // The naive double forward, on the values from_weights was given (the tolerance of
      // test_model.cpp: f32 rounding over a few layers, measured around 1e-5).
      const auto want = NaiveModel(tm).logits(std::vector<int>(ids.begin(), ids.end()));
      REQUIRE(got.size() == want.size() * static_cast<std::size_t>(tm.cfg.vocab_size));
      double worst = 0;
      for (std::size_t t = 0; t < want.size(); ++t)
        for (int v = 0; v < tm.cfg.vocab_size; ++v)
          worst = std::max(worst, std::abs(got[t * tm.cfg.vocab_size + v] - want[t][v]));
      MESSAGE("max |from_weights - naive double| = " << worst);
      CHECK(worst < 2e-4);

      // The loader on the same values, written as a checkpoint: the same model, bit for bit.
      const auto dir =
          fresh_dir("from_weights_" + std::to_string(tie) + std::to_string(static_cast<int>(arch)));
      write_tiny_model(tm, dir);
      CHECK(all_logits(load_model<host, f32>(dir), ids) == got);
    }
  }
}

TEST_CASE("BaseModel::from_weights refuses buffers that do not match the config") {
  const TinyModel tm = make_tiny_model(TinySpec{});
  const ModelConfig& c = tm.cfg;
  const std::string vh = std::to_string(c.vocab_size * c.hidden_size);
  const auto make = [&](HostBuffer<float> embed, HostBuffer<float> head, HostBuffer<float> norm,
                        std::vector<Model::layer_weights> layers, ModelConfig cfg) {
    return Model::from_weights(std::move(cfg), "made-up", std::move(embed), std::move(head),
                               std::move(norm), std::move(layers));
  };
  const auto& embed = tm.tensors.at("model.embed_tokens.weight");
  const auto& head = tm.tensors.at("lm_head.weight");
  const auto& norm = tm.tensors.at("model.norm.weight");
  std::vector<float> short_embed(embed.begin(), embed.end() - 1);
  EXPECT_ERROR(shape_error, make(buf(short_embed), buf(head), buf(norm), layers_of(tm), c),
               "model made-up: model.embed_tokens.weight holds ",
               std::to_string(c.vocab_size * c.hidden_size - 1), " elements, the config says ", vh);
  EXPECT_ERROR(shape_error, make(buf(embed), HostBuffer<float>{}, buf(norm), layers_of(tm), c),
               "model made-up: lm_head.weight holds 0 elements, the config says ", vh);
  ModelConfig tied = c;
  tied.tie_word_embeddings = true;
  EXPECT_ERROR(shape_error, make(buf(embed), buf(head), buf(norm), layers_of(tm), tied),
               "lm_head.weight holds ", vh, " elements, the config says 0");
  EXPECT_ERROR(shape_error, make(buf(embed), buf(head), buf(embed), layers_of(tm), c),
               "model.norm.weight holds ", vh, " elements, the config says ",
               std::to_string(c.hidden_size));
  auto one_layer = layers_of(tm);
  one_layer.pop_back();
  EXPECT_ERROR(shape_error, make(buf(embed), buf(head), buf(norm), std::move(one_layer), c),
               "the layer list holds 1 elements, the config says 2");
  ModelConfig bad = c;
  bad.num_heads = 3;  // not a multiple of the 2 kv heads
  EXPECT_ERROR(config_error, make(buf(embed), buf(head), buf(norm), layers_of(tm), bad),
               "made-up: field 'num_attention_heads' = 3 is not a multiple of");
}
