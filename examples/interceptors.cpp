// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Writing interceptors (docs/interceptors.md shows this file): a device interceptor that
// forbids choosing the previous token again, a host interceptor that prints each step and
// stops at a token budget, both in one chain on a stage.
//   usage: interceptors MODEL_DIR        (an f32 Qwen2/Llama model with head_dim 8, such as
//                                         the golden tests/golden/qwen-c)
#include <baton/baton.hpp>
#include <cstdio>

/// Device kind: plain data and BATON_HD functions that the decode step calls on the logits
/// (the host loop on baton::host; a sampling kernel on a GPU, inside a captured graph).
struct NoImmediateRepeat {
  static constexpr std::string_view plugin_id = "example.no_immediate_repeat";
  static constexpr bool distribution_altering = true;  // it masks logits
  static constexpr bool graph_safe = true;             // the device kind
  struct params_type {};                               // shared, read-only data: none here
  struct state_type {                                  // per request and branch, plain data
    std::int32_t last = -1;
  };
  params_type params() const { return {}; }
  state_type initial_state(const baton::BranchInfo&) const { return {}; }
  BATON_HD static float transform_logit(const params_type&, const state_type& s, std::int32_t id,
                                        float logit) {
    return id == s.last ? -baton::kInfinity : logit;
  }
  BATON_HD static baton::StepAction advance(const params_type&, state_type& s, std::int32_t token) {
    s.last = token;
    return baton::StepAction::go_on;
  }
};

/// Host kind: hooks on the host at every step (not graph-safe: on a GPU each step waits).
struct PrintSteps {
  static constexpr std::string_view plugin_id = "example.print_steps";
  static constexpr bool distribution_altering = false;  // it only watches (and may stop)
  static constexpr bool graph_safe = false;
  struct state_type {
    int budget = 0;
  };
  int budget = 8;  // configuration lives in the object; state never does
  state_type initial_state(const baton::BranchInfo&) const { return {budget}; }
  std::optional<std::int32_t> before_step(state_type&, const baton::StepPlan&) const {
    return std::nullopt;  // a token here would skip the model for this step
  }
  baton::StepAction after_step(state_type& s, const baton::StepOutcome& o) const {
    std::printf("%.*s step %d at position %d: token %d\n", static_cast<int>(o.plan.stage.size()),
                o.plan.stage.data(), o.plan.step, o.plan.position, o.token);
    return --s.budget == 0 ? baton::StepAction::stop : baton::StepAction::go_on;
  }
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: interceptors MODEL_DIR\n");
    return 2;
  }
  using Cache = baton::KvBuffer<baton::layout::HeadMajor<baton::f32, 8>, baton::host>;
  using Slice = baton::LoraSlice<8, baton::host>;
  const auto model = baton::load_model<baton::host, baton::f32>(argv[1]);
  auto stage = baton::make_stage<Cache>(
      "demo", model, Slice::none(model.config()),
      baton::KvShape{.prefix_capacity = 8, .tail_capacity = 64, .slots = 1}, {1, 2, 3},
      baton::wire::input(baton::wire::request), {.max_new = 32},
      baton::Chain{NoImmediateRepeat{}, PrintSteps{.budget = 10}});
  stage.prewarm();
  const baton::DecodeResult r = stage.run(std::vector<std::int32_t>{5, 6, 7, 8});
  for (std::size_t i = 1; i < r.ids.size(); ++i)
    if (r.ids[i] == r.ids[i - 1]) return 1;  // the constraint held if this never happens
  std::printf("%zu tokens, stopped by %.*s\n", r.ids.size(), static_cast<int>(r.stopped_by.size()),
              r.stopped_by.data());
  return r.ids.size() == 10 && r.stopped_by == "example.print_steps" ? 0 : 1;
}
