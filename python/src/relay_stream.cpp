// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Relay.stream: one request through the batch scheduler, its tokens handed to Python as
///        each step accepts them (the scheduler's token callback, as `baton serve` streams).
///        Each __next__ steps the scheduler with the GIL released until a token is ready.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"
#include "relay_handle.hpp"

namespace baton::python {

namespace {

/// One accepted token.
struct StreamToken {
  std::string stage;  ///< the stage's name
  int stage_index = 0;
  int cycle = 1;
  std::int32_t id = 0;
  std::optional<std::string> text;  ///< the token's own bytes decoded (None without tokenizer)
};

/// The iterator Relay.stream returns. It holds the relay (Exclusive) from creation until the
/// request ends or close(); tokens arrive through the scheduler's callback into `ready_`. Its
/// own lock lets two Python threads share one stream (each token goes to one of them).
class RelayStream {
 public:
  RelayStream(std::shared_ptr<RelayHandle> relay, std::vector<std::int32_t> ids)
      : relay_(std::move(relay)) {
    relay_->exclusive().acquire("Relay.stream");
    held_ = true;
    try {
      sched_ = relay_->relay().batched(SchedulerOptions{});
      RequestOptions o;
      o.on_token = [this](Ticket, int stage, int cycle, std::int32_t id) {
        ready_.push_back({relay_->stage_names()[static_cast<std::size_t>(stage)], stage, cycle, id,
                          std::nullopt});
      };
      ticket_ = sched_->submit(std::move(ids), std::move(o));
    } catch (...) {
      end();
      throw;
    }
  }
  ~RelayStream() { end(); }
  RelayStream(const RelayStream&) = delete;
  RelayStream& operator=(const RelayStream&) = delete;

  /// The next token, stepping the scheduler as needed (GIL released by the caller); none when
  /// the request has ended (result() then holds it).
  std::optional<StreamToken> next() {
    const std::scoped_lock lock(mutex_);
    while (ready_.empty() && sched_) {
      if (auto r = sched_->take(ticket_)) {
        result_ = std::move(*r);
        end();
        break;
      }
      sched_->step();
    }
    if (ready_.empty()) return std::nullopt;
    StreamToken t = std::move(ready_.front());
    ready_.pop_front();
    if (const Tokenizer* tok = relay_->tokenizer())
      t.text = decode_text(*tok, std::vector<std::int32_t>{t.id});
    return t;
  }

  /// Drops the request (if it is still running) and gives the relay back.
  void close() {
    const std::scoped_lock lock(mutex_);
    end();
  }

  /// The result once the request has ended.
  std::optional<RelayResult> result() const {
    const std::scoped_lock lock(mutex_);
    return result_;
  }
  const RelayHandle& relay() const { return *relay_; }

 private:
  /// close() with the lock held (or by the only user: the constructor, the destructor).
  void end() {
    if (sched_) {
      sched_->cancel(ticket_);
      sched_.reset();
    }
    if (held_) {
      held_ = false;
      relay_->exclusive().release();
    }
  }

  mutable std::mutex mutex_;
  std::shared_ptr<RelayHandle> relay_;
  std::unique_ptr<BatchedRelay> sched_;
  Ticket ticket_ = 0;
  bool held_ = false;
  std::deque<StreamToken> ready_;
  std::optional<RelayResult> result_;
};

}  // namespace

void bind_relay_stream(nb::module_& m) {
  nb::class_<StreamToken>(m, "StreamToken", "A token a relay stage accepted, as it was accepted.")
      .def_ro("stage", &StreamToken::stage, "The stage's name.")
      .def_ro("stage_index", &StreamToken::stage_index, "The stage's index in the relay.")
      .def_ro("cycle", &StreamToken::cycle, "The cycle, from 1.")
      .def_ro("id", &StreamToken::id, "The token id.")
      .def_ro("text", &StreamToken::text,
              "The token's bytes decoded (a character split across tokens shows as U+FFFD "
              "here; decode the ids together for the exact text).")
      .def("__repr__", [](const StreamToken& t) {
        std::ostringstream out;
        out << "StreamToken(stage=" << repr_str(t.stage) << ", cycle=" << t.cycle
            << ", id=" << t.id;
        if (t.text) out << ", text=" << repr_str(*t.text);
        out << ")";
        return out.str();
      });

  nb::class_<RelayStream>(m, "RelayStream",
                          "Iterator over the tokens of one relay request, every stage and cycle, "
                          "as they are accepted; `result` holds the RelayResult once it ends.")
      .def(
          "__iter__", [](nb::handle self) { return self; }, nb::rv_policy::reference)
      .def("__next__",
           [](RelayStream& s) {
             std::optional<StreamToken> t;
             {
               nb::gil_scoped_release unlocked;
               t = s.next();
             }
             if (!t) throw nb::stop_iteration();
             return *t;
           })
      .def_prop_ro(
          "result",
          [](const RelayStream& s) -> std::optional<RelayResultView> {
            std::optional<RelayResult> r = s.result();
            if (!r) return std::nullopt;
            return view_of(std::move(*r), s.relay().tokenizer(), s.relay().output_stage(),
                           s.relay().stage_names());
          },
          "The request's RelayResult once the iterator is exhausted (None before; verdict "
          "'error' with its message when a stage failed).")
      .def(
          "close",
          [](RelayStream& s) {
            nb::gil_scoped_release unlocked;
            s.close();
          },
          "Cancels the request if it is still running and gives the relay back to other "
          "callers.")
      .def(
          "__enter__", [](nb::handle self) { return self; }, nb::rv_policy::reference)
      .def("__exit__", [](RelayStream& s, nb::args) {
        nb::gil_scoped_release unlocked;
        s.close();
      });

  // Relay.stream, defined here beside its iterator.
  nb::object relay = m.attr("Relay");
  relay.attr("stream") = nb::cpp_function(
      [](std::shared_ptr<RelayHandle> self, const Request& request) {
        std::vector<std::int32_t> ids =
            request_ids(request, self->tokenizer(), self->specials(), "Relay.stream");
        nb::gil_scoped_release unlocked;
        return new RelayStream(std::move(self), std::move(ids));
      },
      nb::scope(relay), nb::name("stream"), nb::is_method(), nb::arg("request"),
      nb::rv_policy::take_ownership,
      "Runs one request and yields each StreamToken as a stage accepts it; the iterator's "
      "`result` is the RelayResult once it is exhausted. The relay is held from this call "
      "until the request ends (close() or leaving a `with` block ends it early).");
}

}  // namespace baton::python
