// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief A relay file built and pre-warmed for Python, as `baton relay` builds it
///        (tools/relay_setup.hpp), and the one-user-at-a-time rule that lets Python threads
///        share it.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "baton/relay/runtime_relay_instances.hpp"  // compiled once, in dispatch/
#include "baton/text/tokenizer.hpp"
#include "options.hpp"

namespace baton::python {

/// One user of a relay at a time: RuntimeRelay::run, its batch scheduler and a re-pre-warm must
/// not overlap (relay/runtime_relay_on.hpp), and a stream holds the relay from its first token
/// to its last. Others wait (with the GIL released by the caller); the thread that holds it and
/// asks again gets usage_error instead of waiting for itself.
class Exclusive {
 public:
  void acquire(const std::string& what) {
    std::unique_lock lock(mutex_);
    BATON_CHECK(!busy_ || owner_ != std::this_thread::get_id(), usage_error, what,
                ": this thread holds the relay already (an unfinished stream: exhaust it or "
                "call its close() first)");
    free_.wait(lock, [&] { return !busy_; });
    busy_ = true;
    owner_ = std::this_thread::get_id();
  }
  void release() {
    {
      const std::scoped_lock lock(mutex_);
      busy_ = false;
    }
    free_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable free_;
  bool busy_ = false;
  std::thread::id owner_;
};

/// Holds an Exclusive for a scope.
class Hold {
 public:
  Hold(Exclusive& e, const std::string& what) : e_(e) { e_.acquire(what); }
  ~Hold() { e_.release(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;

 private:
  Exclusive& e_;
};

/// A relay file, built and pre-warmed on the host backend.
class RelayHandle {
 public:
  /// `path` read as `baton relay --config path` reads it, with the keyword overrides of
  /// `load` (as --backend host, --storage, --threads, --bf16-products) and `slots` requests
  /// per stage at once (--concurrency). `request_specials`: request text may spell added
  /// tokens (--request-specials).
  RelayHandle(const std::filesystem::path& path, const LoadOptions& load, int slots,
              bool request_specials);

  RuntimeRelay& relay() { return *relay_; }
  const RuntimeRelay& relay() const { return *relay_; }
  const Tokenizer* tokenizer() const { return tok_ ? &*tok_ : nullptr; }
  const std::string& path() const { return path_; }
  bool specials() const { return specials_; }
  int slots() const { return slots_; }
  int output_stage() const { return output_stage_; }
  const std::vector<std::string>& stage_names() const { return names_; }
  Exclusive& exclusive() { return exclusive_; }

 private:
  std::string path_;
  std::optional<Tokenizer> tok_;
  std::unique_ptr<RuntimeRelay> relay_;
  bool specials_ = false;
  int slots_ = 1;
  int output_stage_ = 0;
  std::vector<std::string> names_;
  Exclusive exclusive_;
};

}  // namespace baton::python
