// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief DeviceHandoff: what the relay engine keeps in backend memory so that, on a backend
///        with a device loop, each stage's input is assembled on the device
///        (kernels/phased/handoff.hpp) and the built-in gate evaluated there
///        (kernels/phased/gate.hpp).
///
/// Where each segment's ids lie:
///   literal      one buffer of every stage's literal ids, written once (prepare(), at the
///                relay's pre-warm);
///   request      written once per request (begin_request());
///   out<K>       stage K's device-loop buffer (its ids, and their count as the loop left it),
///                or, for a stage that ran the stepped loop on the host, a copy of its ids
///                written after its run (it waited every step anyway);
///   feedback<K>  a copy of out<K> taken on the device when a cycle after the first begins
///                (begin_cycle()): K may run again before its reader does.
/// Every write is queued from kernel arguments (no staging buffer, no wait), on the first
/// stage's workspace: the stages of a relay run in order on one stream (a run-time relay binds
/// them all to its context; a typed relay on baton::cuda binds all of them, or none).
/// Buffers are sized at prepare() (the relay's pre-warm) for the longest input any stage takes
/// and gate needles of up to kNeedleWords ids, through the writer's counted path: a request
/// allocates nothing unless its gate's needle is longer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/kernels/phased/gate.hpp"
#include "baton/kernels/phased/handoff.hpp"
#include "baton/model/grid_ops.hpp"
#include "baton/relay/gate.hpp"
#include "baton/relay/stage.hpp"

namespace baton {

template <Backend B>
class DeviceHandoff {
  template <class T>
  using buffer = typename B::template buffer<T>;
  // Named only where used: the engine holds one on every backend, and calls it on those with a
  // device loop.
  template <class Self = B>
  using Exec = typename BackendOps<Self>::exec;
  using Source = kernels::IdSource;

 public:
  /// Sizes the per-stage buffers and writes every literal segment's ids (checked against the
  /// vocabulary: the forward that reads them does not look at them on the host).
  void prepare(std::span<StageBase<B>* const> stages) {
    stages_.assign(stages.begin(), stages.end());
    const std::size_t n = stages_.size();
    literal_at_.assign(n, {});
    std::vector<std::int32_t> all;
    read_as_feedback_.assign(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& segs = stages_[i]->input_segments();
      for (std::size_t k = 0; k < segs.size(); ++k) {
        literal_at_[i].push_back(static_cast<int>(all.size()));
        if (segs[k].kind == Segment::Kind::feedback) read_as_feedback_[segs[k].stage] = true;
        if (segs[k].kind != Segment::Kind::literal) continue;
        check_ids(segs[k].ids, "stage '" + stages_[i]->name() + "' segment " + std::to_string(k) +
                                   " (" + segs[k].describe() + ")");
        all.insert(all.end(), segs[k].ids.begin(), segs[k].ids.end());
      }
    }
    literals_ = sized(all.size() + 1);
    stored_.clear();
    host_out_.clear();
    int longest_input = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t words = 1 + static_cast<std::size_t>(stages_[i]->max_new());
      stored_.push_back(sized(read_as_feedback_[i] ? words : 0));
      host_out_.push_back(sized(applies(static_cast<int>(i)) ? 0 : words));  // run on the host
      longest_input = std::max(longest_input, stages_[i]->max_input());
    }
    // A request no stage could take is refused before it is written; one that fits the
    // longest input, and a gate needle of up to kNeedleWords ids, need no allocation later.
    request_ = sized(static_cast<std::size_t>(longest_input));
    needle_ = sized(kNeedleWords + 1);
    needle_ids_.assign(1, -1);  // nothing written in the buffer yet
    Exec<> exec(writer());
    write_ids(exec, raw_pointer(literals_.data()), all);
    latest_.assign(n, {});
    previous_.assign(n, {});
    prepared_ = true;
  }
  bool prepared() const { return prepared_; }

  /// Writes the request's ids, and the gate's needle when it is a built-in not yet written.
  void begin_request(std::span<const std::int32_t> request, const Gate& gate) {
    check_ids(request, "relay request");
    writer().extras.grow(request_, request.size());
    request_len_ = static_cast<int>(request.size());
    Exec<> exec(writer());
    write_ids(exec, raw_pointer(request_.data()), request);
    gate_ = {};
    if (gate.built_in()) {
      if (needle_.size() < gate.needle().size() + 1) {
        needle_ = buffer<std::int32_t>();
        writer().extras.grow(needle_, gate.needle().size() + 1);  // counted
        needle_ids_.assign(1, -1);  // nothing written in the new buffer yet
      }
      if (needle_ids_ != gate.needle()) {
        write_ids(exec, raw_pointer(needle_.data()), gate.needle());
        needle_ids_ = gate.needle();
      }
      gate_.mode = gate.kind() == Gate::Kind::starts_with ? kernels::kGateStartsWith
                                                          : kernels::kGateContains;
      gate_.needle = raw_pointer(needle_.data());
      gate_.n = static_cast<std::int32_t>(gate.needle().size());
    }
    for (auto& s : latest_) s = {};
    for (auto& s : previous_) s = {};
  }

  /// A cycle after the first begins: every output read as feedback is copied on the device,
  /// as the host keeps the previous cycle's ids.
  void begin_cycle() {
    Exec<> exec(writer());
    for (std::size_t k = 0; k < stages_.size(); ++k) {
      if (!read_as_feedback_[k]) continue;
      std::int32_t* words = raw_pointer(stored_[k].data());
      using K = kernels::HandoffKernel;
      K::Args a;
      a.segments[0] = latest_[k];
      a.n_segments = 1;
      a.dst = words + 1;
      a.capacity = stages_[k]->max_new();
      a.total = words;
      exec.template launch<K>(K::config(), a);
      previous_[k] = {words + 1, words, 0};
    }
  }

  /// The hand-off of stage `i`'s input (dst, capacity and descriptor are the stage's).
  kernels::HandoffKernel::Args plan(int i) const {
    const auto& segs = stages_.at(i)->input_segments();
    BATON_CHECK(static_cast<int>(segs.size()) <= kernels::kMaxHandoffSegments, usage_error,
                "stage '", stages_[i]->name(), "' has ", segs.size(),
                " input segments; the device hand-off takes at most ",
                kernels::kMaxHandoffSegments);
    kernels::HandoffKernel::Args a;
    a.n_segments = static_cast<int>(segs.size());
    for (std::size_t k = 0; k < segs.size(); ++k) {
      const Segment& g = segs[k];
      switch (g.kind) {
        case Segment::Kind::literal:
          a.segments[k] = {raw_pointer(literals_.data()) + literal_at_[i][k], nullptr,
                           static_cast<std::int32_t>(g.ids.size())};
          break;
        case Segment::Kind::request:
          a.segments[k] = {raw_pointer(request_.data()), nullptr, request_len_};
          break;
        case Segment::Kind::output:
          a.segments[k] = latest_[g.stage];
          break;
        case Segment::Kind::feedback:
          a.segments[k] = previous_[g.stage];  // empty in the first cycle
          break;
        case Segment::Kind::shared:  // its K/V are read in place: no ids to hand over
          a.segments[k] = {};
          break;
      }
    }
    return a;
  }
  /// Whether stage `i` can take its input from plan(i).
  bool applies(int i) const {
    return stages_.at(i)->takes_device_handoff() &&
           static_cast<int>(stages_[i]->input_segments().size()) <= kernels::kMaxHandoffSegments;
  }

  /// The relay's built-in gate on the device (mode kGateNone for a custom gate or none).
  const kernels::DeviceGate& gate() const { return gate_; }

  /// Stage `i` ran on the device: its output stays in its loop buffer.
  void ran_on_device(int i) { latest_.at(i) = stages_[i]->output_on_device(0); }
  /// Stage `i` ran on the host: its ids are written where later hand-offs read them.
  void ran_on_host(int i, std::span<const std::int32_t> ids) {
    check_ids(ids, "stage '" + stages_.at(i)->name() + "' output");
    std::vector<std::int32_t> words{static_cast<std::int32_t>(ids.size())};
    words.insert(words.end(), ids.begin(), ids.end());
    Exec<> exec(writer());
    std::int32_t* out = raw_pointer(host_out_.at(i).data());
    write_ids(exec, out, words);
    latest_[i] = {out + 1, out, 0};
  }

 private:
  Workspace<B>& writer() { return stages_.front()->workspace(0); }
  /// A buffer of `n` words, through the writer's counted path (backend/exec_binding.hpp).
  buffer<std::int32_t> sized(std::size_t n) {
    buffer<std::int32_t> b;
    writer().extras.grow(b, n);
    return b;
  }
  /// Gate needle ids room is made for at prepare().
  static constexpr std::size_t kNeedleWords = 64;

  void check_ids(std::span<const std::int32_t> ids, const std::string& what) const {
    const int vocab = stages_.front()->vocab_size();
    for (std::size_t k = 0; k < ids.size(); ++k)
      BATON_CHECK(ids[k] >= 0 && ids[k] < vocab, usage_error, what, ": token id ", ids[k],
                  " at index ", k, " is outside the vocabulary [0, ", vocab, ")");
  }

  std::vector<StageBase<B>*> stages_;
  std::vector<std::vector<int>> literal_at_;  // [stage][segment]: offset in literals_
  std::vector<bool> read_as_feedback_;
  buffer<std::int32_t> literals_;
  buffer<std::int32_t> request_;
  int request_len_ = 0;
  std::vector<buffer<std::int32_t>> stored_;    // feedback copies: [count, ids...]
  std::vector<buffer<std::int32_t>> host_out_;  // outputs of host-run stages: [count, ids...]
  buffer<std::int32_t> needle_;
  std::vector<std::int32_t> needle_ids_;
  kernels::DeviceGate gate_{};
  std::vector<Source> latest_;    // where each stage's latest output lies
  std::vector<Source> previous_;  // ... as of the start of this cycle
  bool prepared_ = false;
};

}  // namespace baton
