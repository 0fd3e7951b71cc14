// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Input wiring of a stage: the segments its input is assembled from.
///
/// A stage's input is a sequence of segments: literal template ids, the request's ids, the
/// output of an earlier stage in this cycle (`out<K>`), or the output a stage produced in the
/// previous cycle (`feedback<K>`, empty in the first cycle), or — first, in a relay of activated
/// adapters — the relay's shared sequence so far (`shared`: relay/shared_sequence.hpp; its K/V
/// are read, not computed again, so it adds no ids to the stage's own input). Written with types
/// (`wire::input(request, out<0>)`) the wiring is checked at compile time by Relay<Stages...>;
/// written as data (a relay JSON file) it is checked when the relay is built.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace baton {

/// A segment as data: what the relay engine works with.
struct Segment {
  enum class Kind { literal, request, output, feedback, shared };
  Kind kind = Kind::literal;
  int stage = -1;                 ///< for output/feedback: the stage read
  std::vector<std::int32_t> ids;  ///< for literal: the ids

  std::string describe() const {
    switch (kind) {
      case Kind::literal:
        return "literal(" + std::to_string(ids.size()) + " ids)";
      case Kind::request:
        return "request";
      case Kind::output:
        return "out<" + std::to_string(stage) + ">";
      case Kind::feedback:
        return "feedback<" + std::to_string(stage) + ">";
      case Kind::shared:
        return "shared";
    }
    return "?";
  }
};

namespace wire {

/// Literal template ids.
struct Literal {
  std::vector<std::int32_t> ids;
};
inline Literal ids(std::initializer_list<std::int32_t> l) { return Literal{l}; }
inline Literal ids(std::vector<std::int32_t> v) { return Literal{std::move(v)}; }

/// The relay request's ids.
struct Request {};
inline constexpr Request request{};

/// The output of stage K in the current cycle (K must be an earlier stage).
template <int K>
struct Out {
  static constexpr int stage = K;
};
template <int K>
inline constexpr Out<K> out{};

/// The output of stage K in the previous cycle (empty in the first); any stage may be read.
template <int K>
struct Feedback {
  static constexpr int stage = K;
};
template <int K>
inline constexpr Feedback<K> feedback{};

/// The relay's shared sequence so far (a stage of activated adapters reads it first; the stage
/// is given the sequence with Stage::read_shared).
struct Shared {};
inline constexpr Shared shared{};

/// A typed input: the segment types are part of the stage's type, so Relay<Stages...> can
/// check the wiring at compile time.
template <class... Segs>
struct Input {
  std::tuple<Segs...> segments;
};

template <class T>
inline constexpr bool is_segment_v =
    std::is_same_v<T, Literal> || std::is_same_v<T, Request> || std::is_same_v<T, Shared>;
template <int K>
inline constexpr bool is_segment_v<Out<K>> = true;
template <int K>
inline constexpr bool is_segment_v<Feedback<K>> = true;

/// `wire::input(ids({1, 2}), request, out<0>)`.
template <class... Segs>
Input<std::decay_t<Segs>...> input(Segs&&... segs) {
  static_assert((is_segment_v<std::decay_t<Segs>> && ...),
                "wire::input takes only segments: wire::ids(...), wire::request, wire::out<K>, "
                "wire::feedback<K>, wire::shared (or text from a tokenizer)");
  return {{std::forward<Segs>(segs)...}};
}

/// An input known only at run time (a relay JSON file): checked when the relay is built.
struct DynamicInput {
  std::vector<Segment> segments;
};

// ---- conversion to data ----------------------------------------------------------------
inline Segment to_segment(const Literal& l) { return {Segment::Kind::literal, -1, l.ids}; }
inline Segment to_segment(Request) { return {Segment::Kind::request, -1, {}}; }
inline Segment to_segment(Shared) { return {Segment::Kind::shared, -1, {}}; }
template <int K>
Segment to_segment(Out<K>) {
  return {Segment::Kind::output, K, {}};
}
template <int K>
Segment to_segment(Feedback<K>) {
  return {Segment::Kind::feedback, K, {}};
}

template <class... Segs>
std::vector<Segment> to_segments(const Input<Segs...>& in) {
  return std::apply([](const auto&... s) { return std::vector<Segment>{to_segment(s)...}; },
                    in.segments);
}
inline std::vector<Segment> to_segments(const DynamicInput& in) { return in.segments; }

// ---- compile-time wiring facts -----------------------------------------------------------
template <class T>
struct is_output_read : std::false_type {};
template <int K>
struct is_output_read<Out<K>> : std::true_type {};
template <class T>
struct is_feedback_read : std::false_type {};
template <int K>
struct is_feedback_read<Feedback<K>> : std::true_type {};

template <class Seg>
constexpr bool output_read_ok(int reader) {
  if constexpr (is_output_read<Seg>::value) {
    return Seg::stage >= 0 && Seg::stage < reader;
  } else {
    return true;
  }
}
template <class Seg>
constexpr bool feedback_read_ok(int stages) {
  if constexpr (is_feedback_read<Seg>::value) {
    return Seg::stage >= 0 && Seg::stage < stages;
  } else {
    return true;
  }
}

/// Wiring rules of a typed input, evaluated by Relay<Stages...> for each stage.
template <class In>
struct wiring {
  static constexpr bool typed = false;
  static constexpr bool outputs_earlier(int) { return true; }
  static constexpr bool feedback_in_range(int) { return true; }
};
template <class... Segs>
struct wiring<Input<Segs...>> {
  static constexpr bool typed = true;
  /// Every out<K> read by stage `reader` names an earlier stage (0 <= K < reader).
  static constexpr bool outputs_earlier(int reader) {
    return (output_read_ok<Segs>(reader) && ...);
  }
  /// Every feedback<K> names a stage of the relay (0 <= K < stages).
  static constexpr bool feedback_in_range(int stages) {
    return (feedback_read_ok<Segs>(stages) && ...);
  }
};

}  // namespace wire
}  // namespace baton
