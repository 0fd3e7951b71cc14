// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The three-stage relay the scheduler tests run, on any backend: golden model qwen-c with two of
// llama.cpp's golden adapters and one stage without, a gate that passes about a third of the
// outputs (requests pass in different cycles, some never), feedback and loop_from; and the check
// that a batched request's result equals the same request run alone.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "baton/kv/kv_buffer.hpp"
#include "baton/lora/lora_slice.hpp"
#include "baton/model/base_model.hpp"
#include "baton/relay/engine.hpp"
#include "baton/relay/stage.hpp"
#include "support/test_paths.hpp"

namespace baton::test {

inline std::vector<std::int32_t> scheduler_ids(int n, int seed) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = (i * 53 + seed * 17 + 3) % 384;
  return v;
}

/// The relay: extract (adapter qv) -> reason (adapter all, reads the request, extract's output
/// and verify's previous verdict) -> verify (no adapter); `slots` per stage.
template <Backend B>
struct SchedulerWorld {
  using Model = BaseModel<B, f32>;
  using Slice = LoraSlice<16, B>;
  using Cache = KvBuffer<layout::HeadMajor<f32, 8>, B>;
  using StageT = Stage<Model, Slice, Cache, wire::DynamicInput>;

  std::filesystem::path root = BATON_GOLDEN_DIR;
  Model model = load_model<B, f32>(root / "qwen-c");
  std::vector<std::unique_ptr<StageT>> stages;

  /// `reason_max_new`: stage reason's max_new (a smaller one is the reference for a request
  /// that caps it); `sampling`: the stages' sampling options in order (none: greedy).
  explicit SchedulerWorld(int slots, int reason_max_new = 8,
                          std::vector<SamplingOptions> sampling = {}) {
    const ModelConfig& c = model.config();
    const auto literal = [](std::vector<std::int32_t> v) {
      return Segment{Segment::Kind::literal, -1, std::move(v)};
    };
    const Segment request{Segment::Kind::request, -1, {}};
    const auto add = [&](const char* name, Slice slice, int prefix, std::vector<Segment> in,
                         int max_new) {
      stages.push_back(std::make_unique<StageT>(
          name, model, std::move(slice), KvShape{prefix, 96, slots}, scheduler_ids(prefix, prefix),
          wire::DynamicInput{std::move(in)},
          StageLimits{
              max_new,
              {},
              stages.size() < sampling.size() ? sampling[stages.size()] : SamplingOptions{}}));
      stages.back()->prewarm();
    };
    add("extract", Slice::load(root / "qwen-c-lora-qv", c), 12, {literal({1, 2}), request}, 6);
    add("reason", Slice::load(root / "qwen-c-lora-all", c), 8,
        {request, {Segment::Kind::output, 0, {}}, {Segment::Kind::feedback, 2, {}}},
        reason_max_new);
    add("verify", Slice::none(c), 5, {{Segment::Kind::output, 1, {}}, literal({7})}, 3);
  }
  std::vector<StageT*> ptrs() {
    std::vector<StageT*> v;
    for (auto& s : stages) v.push_back(s.get());
    return v;
  }
  std::vector<StageBase<B>*> bases() {
    std::vector<StageBase<B>*> v;
    for (auto& s : stages) v.push_back(s.get());
    return v;
  }
};

/// Passes on about a third of the outputs: requests pass in different cycles, some never.
inline RelayOptions scheduler_relay_options() {
  RelayOptions o;
  o.max_cycles = 3;
  o.loop_from = 1;
  o.gate = Gate([](std::span<const std::int32_t> v) {
    long sum = 0;
    for (const std::int32_t x : v) sum += x;
    return sum % 3 == 0;
  });
  return o;
}

/// The stages' max_new; none has stop ids or interceptors, so every run generates exactly that
/// many ids (a fact of the relay, not of either implementation).
inline constexpr int kSchedulerMaxNew[] = {6, 8, 3};

inline void check_same_result(const RelayResult& got, const RelayResult& want) {
  CHECK(verdict_name(got.verdict) == std::string(verdict_name(want.verdict)));
  CHECK(got.error == want.error);
  CHECK(got.cycles == want.cycles);
  REQUIRE(got.runs.size() == want.runs.size());
  for (std::size_t k = 0; k < got.runs.size(); ++k) {
    CAPTURE(k);
    CHECK(got.runs[k].stage == want.runs[k].stage);
    CHECK(got.runs[k].cycle == want.runs[k].cycle);
    CHECK(got.runs[k].ids == want.runs[k].ids);
    CHECK(got.runs[k].input_tokens == want.runs[k].input_tokens);
    CHECK(got.runs[k].stopped == want.runs[k].stopped);
    CHECK(got.runs[k].ids.size() == static_cast<std::size_t>(kSchedulerMaxNew[got.runs[k].stage]));
  }
}

}  // namespace baton::test
