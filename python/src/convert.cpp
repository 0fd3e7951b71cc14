// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief convert.hpp's conversions, and the bindings of the result types they produce.
#include "convert.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <limits>
#include <random>
#include <sstream>

#include "baton/text/utf8.hpp"
#include "bindings.hpp"

namespace baton::python {

std::vector<std::int32_t> request_ids(const Request& request, const Tokenizer* tok, bool specials,
                                      const char* what) {
  if (const auto* ids = std::get_if<std::vector<std::int32_t>>(&request)) {
    BATON_CHECK(!ids->empty(), usage_error, what, ": the request has no token ids");
    return *ids;
  }
  const std::string& text = std::get<std::string>(request);
  BATON_CHECK(tok != nullptr, usage_error, what,
              ": the request is text, but there is no tokenizer (give token ids, or a "
              "tokenizer.json)");
  std::vector<std::int32_t> ids = specials ? tok->encode(text) : tok->encode_ordinary_text(text);
  BATON_CHECK(!ids.empty(), usage_error, what, ": the request \"", detail::excerpt(text),
              "\" encodes to no tokens");
  return ids;
}

SamplingOptions sampling_options(const SamplingArgs& a, int vocab) {
  SamplingOptions o;
  auto& p = o.params;
  if (a.temperature) p.temperature = *a.temperature;
  if (a.top_k) p.top_k = *a.top_k;
  if (a.top_p) p.top_p = *a.top_p;
  if (a.min_p) p.min_p = *a.min_p;
  if (a.repeat_penalty) p.repeat_penalty = *a.repeat_penalty;
  if (a.presence_penalty) p.presence_penalty = *a.presence_penalty;
  if (a.frequency_penalty) p.frequency_penalty = *a.frequency_penalty;
  if (a.repeat_last_n) o.repeat_last_n = *a.repeat_last_n;
  if (a.logprobs) {
    o.logprobs = true;
    o.top_logprobs = *a.logprobs;
  }
  o.check(vocab);
  if (a.seed) {
    o.seed = *a.seed;
  } else {
    std::random_device rd;
    o.seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  return o;
}

nb::ndarray<nb::numpy, float, nb::ndim<1>> owned_array(std::vector<float>&& row) {
  auto* owned = new std::vector<float>(std::move(row));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return nb::ndarray<nb::numpy, float, nb::ndim<1>>(owned->data(), {owned->size()}, owner);
}

std::string repr_str(const std::string& s) {
  return nb::repr(nb::str(s.c_str(), s.size())).c_str();
}

std::string decode_text(const Tokenizer& tok, const std::vector<std::int32_t>& ids) {
  return text::replace_invalid_utf8(tok.decode_known(ids));
}

RelayResultView view_of(RelayResult&& r, const Tokenizer* tok, int output_stage,
                        const std::vector<std::string>& stage_names) {
  RelayResultView v;
  v.verdict = verdict_name(r.verdict);
  v.cycles = r.cycles;
  v.total_ms = r.total_ms;
  v.error = std::move(r.error);
  v.output_stage = output_stage;
  v.stage_names = stage_names;
  for (StageRun& s : r.runs) {
    StageRunView w;
    w.name = std::move(s.name);
    w.stage = s.stage;
    w.cycle = s.cycle;
    if (tok != nullptr) w.text = decode_text(*tok, s.ids);
    w.ids = std::move(s.ids);
    w.ms = s.ms;
    w.stopped = s.stopped;
    w.stopped_by = std::move(s.stopped_by);
    w.input_tokens = s.input_tokens;
    w.forwards = s.forwards;
    w.skipped = s.skipped;
    w.logprobs = std::move(s.logprobs);
    v.runs.push_back(std::move(w));
  }
  return v;
}

namespace {

/// The latest run of `stage` in `r`, or null.
const StageRunView* latest_run(const RelayResultView& r, int stage) {
  for (auto it = r.runs.rbegin(); it != r.runs.rend(); ++it)
    if (it->stage == stage) return &*it;
  return nullptr;
}

std::string ids_repr(const std::vector<std::int32_t>& ids) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out << (i ? ", " : "") << ids[i];
  out << "]";
  return out.str();
}

}  // namespace

void bind_results(nb::module_& m) {
  nb::class_<TokenLogprobs>(m, "TokenLogprob",
                            "A chosen token's log-probability and its best alternatives.")
      .def_ro("id", &TokenLogprobs::id, "The chosen token.")
      .def_ro("logprob", &TokenLogprobs::logprob, "Its log-probability.")
      .def_prop_ro(
          "top",
          [](const TokenLogprobs& t) {
            std::vector<std::pair<std::int32_t, float>> top;
            for (int j = 0; j < t.n_top; ++j)
              top.emplace_back(t.top[static_cast<std::size_t>(j)].id,
                               t.top[static_cast<std::size_t>(j)].logprob);
            return top;
          },
          "The most likely tokens at that step, as (id, logprob), best first.")
      .def("__repr__", [](const TokenLogprobs& t) {
        std::ostringstream out;
        out << "TokenLogprob(id=" << t.id << ", logprob=" << t.logprob << ", top=" << t.n_top
            << ")";
        return out.str();
      });

  nb::class_<StageRunView>(m, "StageRun", "One stage's run in one cycle of a relay.")
      .def_ro("name", &StageRunView::name, "The stage's name.")
      .def_ro("stage", &StageRunView::stage, "The stage's index in the relay.")
      .def_ro("cycle", &StageRunView::cycle, "The cycle, from 1.")
      .def_ro("ids", &StageRunView::ids, "The generated token ids (stop token excluded).")
      .def_ro("text", &StageRunView::text, "The ids decoded (None without a tokenizer).")
      .def_ro("ms", &StageRunView::ms, "Wall time of this stage run in milliseconds.")
      .def_ro("stopped", &StageRunView::stopped,
              "Whether it ended on a stop id or an interceptor's stop (else at max_new).")
      .def_ro("stopped_by", &StageRunView::stopped_by,
              "The interceptor that stopped it, if one did ('' otherwise).")
      .def_ro("input_tokens", &StageRunView::input_tokens, "Tokens of its input (its prefill).")
      .def_ro("forwards", &StageRunView::forwards, "Model forwards, prefill included.")
      .def_ro("skipped", &StageRunView::skipped, "Steps whose forward was skipped (step-skip).")
      .def_ro("logprobs", &StageRunView::logprobs,
              "Each id's log-probability, when the stage's sampling asks for them.")
      .def("__repr__", [](const StageRunView& s) {
        std::ostringstream out;
        out << "StageRun(name=" << repr_str(s.name) << ", cycle=" << s.cycle << ", "
            << (s.text ? "text=" + repr_str(*s.text) : "ids=" + ids_repr(s.ids)) << ", ms=" << s.ms
            << ")";
        return out.str();
      });

  nb::class_<RelayResultView>(m, "RelayResult",
                              "What a relay run produced, with its timings however it ended.")
      .def_ro("runs", &RelayResultView::runs, "Every stage run, in execution order.")
      .def_ro("verdict", &RelayResultView::verdict,
              "'pass' (the gate passed), 'fail' (every cycle ran, the gate never passed) or "
              "'error' (run_many: this request failed; see error).")
      .def_ro("cycles", &RelayResultView::cycles, "Cycles started.")
      .def_ro("total_ms", &RelayResultView::total_ms,
              "Wall time of the whole run in milliseconds, set however it ended.")
      .def_ro("error", &RelayResultView::error, "The message when verdict is 'error'.")
      .def_prop_ro(
          "passed", [](const RelayResultView& r) { return r.verdict == "pass"; },
          "Whether the gate passed.")
      .def_prop_ro(
          "output",
          [](const RelayResultView& r) -> nb::object {
            const StageRunView* s = latest_run(r, r.output_stage);
            return s ? nb::cast(*s) : nb::none();
          },
          "The latest run of the relay's output stage (the file's \"output\"; by default the "
          "last stage), or None if it never ran.")
      .def_prop_ro(
          "text",
          [](const RelayResultView& r) -> std::optional<std::string> {
            const StageRunView* s = latest_run(r, r.output_stage);
            return s ? s->text : std::nullopt;
          },
          "The output stage's latest text (None without a tokenizer or output).")
      .def(
          "stage_ms",
          [](const RelayResultView& r, const std::string& name) {
            double t = 0;
            for (const StageRunView& s : r.runs)
              if (s.name == name) t += s.ms;
            return t;
          },
          nb::arg("name"), "Total wall time of the stage `name` over every cycle, in ms.")
      .def("__repr__", [](const RelayResultView& r) {
        std::ostringstream out;
        out << "RelayResult(verdict=" << repr_str(r.verdict) << ", cycles=" << r.cycles
            << ", runs=" << r.runs.size() << ", total_ms=" << r.total_ms;
        if (const StageRunView* s = latest_run(r, r.output_stage); s && s->text)
          out << ", text=" << repr_str(*s->text);
        if (!r.error.empty()) out << ", error=" << repr_str(r.error);
        out << ")";
        return out.str();
      });
}

}  // namespace baton::python
