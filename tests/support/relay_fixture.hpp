// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A tiny model with three adapters on disk, and the no-cache reference for chaining checks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/kv/kv_buffer.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/relay/relay.hpp"
#include "reference/naive_model.hpp"
#include "support/host_model.hpp"
#include "support/tiny_model.hpp"

namespace baton::test {

using RModel = BaseModel<host, f32>;
using RSlice = LoraSlice<8, host>;
using RCache = KvBuffer<layout::HeadMajor<f32, 8>, host>;

/// One tiny Qwen2-style model and three different adapters (q/v; all seven with rsLoRA; MLP).
struct RelayFixture {
  TinyModel tm = make_tiny_model([] {
    TinySpec s;
    s.seed = 101;
    s.vocab = 64;  // small vocab: outputs revisit ids, so gates can be hit
    return s;
  }());
  std::vector<TinyAdapter> adapters;
  std::filesystem::path dir;
  std::unique_ptr<RModel> model;

  explicit RelayFixture(const std::string& name) {
    dir = fresh_dir("relay_" + name);
    write_tiny_model(tm, dir / "model");
    adapters.push_back(make_tiny_adapter(
        tm.cfg, {.r = 4, .alpha = 8, .targets = {"q_proj", "v_proj"}, .seed = 1}));
    adapters.push_back(make_tiny_adapter(
        tm.cfg,
        {.r = 8,
         .alpha = 4,
         .rslora = true,
         .targets = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"},
         .seed = 2}));
    adapters.push_back(make_tiny_adapter(
        tm.cfg, {.r = 2, .alpha = 6, .targets = {"gate_proj", "up_proj", "down_proj"}, .seed = 3}));
    for (std::size_t i = 0; i < adapters.size(); ++i)
      write_tiny_adapter(adapters[i], adapter_dir(static_cast<int>(i)));
    model = std::make_unique<RModel>(load_model<host, f32>(dir / "model"));
  }
  std::filesystem::path adapter_dir(int i) const { return dir / ("adapter" + std::to_string(i)); }
  RSlice slice(int i) const { return RSlice::load(adapter_dir(i), model->config()); }

  /// The no-cache reference: adapter i's model decoding prefix + input from scratch.
  std::vector<std::int32_t> reference(int adapter, const std::vector<std::int32_t>& prefix,
                                      const std::vector<std::int32_t>& input, int max_new,
                                      const std::vector<std::int32_t>& stop = {}) const {
    const NaiveModel ref(tm, adapter >= 0 ? &adapters[adapter] : nullptr);
    std::vector<int> seq(prefix.begin(), prefix.end());
    seq.insert(seq.end(), input.begin(), input.end());
    const auto out = ref.greedy(seq, max_new, std::vector<int>(stop.begin(), stop.end()));
    return {out.begin(), out.end()};
  }
};

inline std::vector<std::int32_t> concat(std::initializer_list<std::vector<std::int32_t>> parts) {
  std::vector<std::int32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace baton::test
