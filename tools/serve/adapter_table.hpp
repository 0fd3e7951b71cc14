// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The adapters a served model answers as more model ids (`--lora NAME=DIR`,
///        POST /v1/load_lora_adapter), and which of them sit in the relay's adapter slots.
///
/// The served model's relay has stage 0 (the base) and one stage per adapter slot
/// (`--max-loras`). An adapter runs only from a slot; a request for an adapter that holds none
/// waits until one can be given to it: a slot that holds nothing, or the least recently used one
/// whose adapter has no request in flight (its weights are swapped out, its copy kept in memory
/// up to `--max-cpu-loras` adapters, else read again from its folder on demand). A slot's stage
/// is pre-warmed again whenever its adapter changes, and an adapter is known by its files'
/// content hash: a copy read again whose files changed is refused, never run as the old one.
///
/// Threads: HTTP threads register, unregister and count requests in; the stepping thread
/// places requests in slots (swapping adapters) and counts them out. One mutex guards all; a
/// swap happens under it (a memory move and an empty pre-warm; reading an evicted adapter's
/// files again is the slow case, and only the stepping thread waits for it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/relay/runtime_relay_on.hpp"

namespace baton::serve {

/// Bounds of an adapter table.
struct AdapterLimits {      // NOLINT: aggregate
  int max_loras = 1;        ///< adapter slots: adapters that can run in one step
  int max_cpu_loras = 1;    ///< adapters held in memory, slots included (>= max_loras)
  int max_adapters = 1024;  ///< adapters registered at most (each costs a name and a path)
};

/// The content hash of a PEFT folder: SHA-256 over its adapter_config.json's and
/// adapter_model.safetensors' own SHA-256 (hex), so equal files give equal keys.
std::string adapter_content_hash(const std::filesystem::path& dir);

/// What /metrics and /v1/models see of the table at one moment.
struct AdapterSnapshot {
  struct Entry {
    std::string name;
    std::string path;
    std::string sha256;
    int slot = -1;  ///< the stage it sits in (-1: none)
    bool in_memory = false;
    int in_flight = 0;
  };
  std::vector<Entry> adapters;  ///< by name
  int max_loras = 0;
  int max_cpu_loras = 0;
  long long loads = 0;      ///< adapters put into a slot so far
  long long evictions = 0;  ///< adapters taken out of a slot for another
  long long reads = 0;      ///< adapters read from their folder (registration included)
};

class AdapterTable {
 public:
  /// A table over `relay`'s stages 1..limits.max_loras (stage 0 is the base model's).
  AdapterTable(RuntimeRelay& relay, AdapterLimits limits);

  /// Reads, checks and registers the adapter in `dir` as `name` (an HTTP thread: the relay's
  /// stages are not touched). config_error and the loader's errors name the file and field;
  /// usage_error when `name` is taken or the table is full. Nothing changes on failure.
  void add(const std::string& name, const std::filesystem::path& dir);
  /// Unregisters `name`. False when it has requests in flight (nothing changes then);
  /// usage_error when no adapter has that name.
  bool remove(const std::string& name);
  bool contains(const std::string& name) const;
  /// Counts a request for `name` in (before it is queued, so an unload sees it); false when
  /// no adapter has that name.
  bool acquire(const std::string& name);
  /// Counts a request for `name` out (it finished: its slot is free again).
  void release(const std::string& name);
  /// The stepping thread: the stage a request for `name` runs on now, swapping adapters as
  /// needed; nullopt when every slot holds an adapter with requests in flight (try again after
  /// a step). Throws when the adapter cannot be read again (its folder changed or vanished);
  /// the table is unchanged then.
  std::optional<int> place(const std::string& name);
  AdapterSnapshot snapshot() const;
  const AdapterLimits& limits() const { return limits_; }

 private:
  struct Entry {
    std::filesystem::path path;
    std::string sha256;
    std::unique_ptr<RelayAdapter> copy;  ///< in memory, out of any slot (null: on disk only)
    int slot = -1;                       ///< the stage it sits in (-1: none)
    int in_flight = 0;
    std::uint64_t used = 0;  ///< the tick of its last placement
  };
  /// Drops the copies of the least recently used adapters out of the slots until at most
  /// max_cpu_loras adapters are in memory (the mutex held).
  void trim_copies();
  int in_memory() const;

  RuntimeRelay& relay_;
  AdapterLimits limits_;
  mutable std::mutex mutex_;  // everything below
  std::map<std::string, Entry> entries_;
  std::vector<std::string> owner_;  ///< by slot (stage - 1): the adapter in it ("" none)
  std::uint64_t tick_ = 0;
  long long loads_ = 0, evictions_ = 0, reads_ = 0;
};

}  // namespace baton::serve
