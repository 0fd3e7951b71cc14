// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "adapter_table.hpp"

#include <limits>
#include <span>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/io/sha256.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace baton::serve {

namespace {

/// Hands the pages of freed adapters back to the system. An adapter is read on an HTTP thread
/// (that thread's malloc arena) and freed later on another, so under load-and-unload churn
/// glibc's arenas keep the free pages and the resident size creeps up (measured: +5 MB a minute
/// at one load or unload a second, flat with this).
void return_free_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

std::string adapter_content_hash(const std::filesystem::path& dir) {
  io::Sha256 h;
  for (const char* f : {"adapter_config.json", "adapter_model.safetensors"}) {
    const std::filesystem::path p = dir / f;
    BATON_CHECK(std::filesystem::is_regular_file(p), config_error, "adapter ", dir.string(),
                ": no ", f,
                " (a PEFT adapter folder holds adapter_config.json and "
                "adapter_model.safetensors)");
    const std::string one = io::sha256_file(p);
    h.update(std::as_bytes(std::span<const char>(one)));
  }
  return h.hex();
}

AdapterTable::AdapterTable(RuntimeRelay& relay, AdapterLimits limits)
    : relay_(relay), limits_(limits), owner_(static_cast<std::size_t>(limits.max_loras)) {
  BATON_CHECK(limits_.max_loras >= 1 && limits_.max_cpu_loras >= limits_.max_loras, usage_error,
              "AdapterTable: max_loras ", limits_.max_loras, " and max_cpu_loras ",
              limits_.max_cpu_loras, " (need 1 <= max_loras <= max_cpu_loras)");
  BATON_CHECK(static_cast<int>(relay_.stage_names().size()) == limits_.max_loras + 1, usage_error,
              "AdapterTable: the relay has ", relay_.stage_names().size(),
              " stages, not the base and ", limits_.max_loras, " adapter slots");
}

void AdapterTable::add(const std::string& name, const std::filesystem::path& dir) {
  // Read outside the lock: requests keep flowing while a large adapter loads. Hashed before
  // and after the read, so the key names the weights that were read.
  const std::string before = adapter_content_hash(dir);
  std::unique_ptr<RelayAdapter> a = relay_.load_adapter(dir);
  BATON_CHECK(adapter_content_hash(dir) == before, config_error, "adapter ", dir.string(),
              ": its files changed while they were read");
  const std::lock_guard lock(mutex_);
  BATON_CHECK(!entries_.contains(name), usage_error, "an adapter is already served as '", name,
              "'");
  BATON_CHECK(static_cast<int>(entries_.size()) < limits_.max_adapters, capacity_error,
              "the server already holds ", limits_.max_adapters, " adapters; unload one first");
  Entry e;
  e.path = dir;
  e.sha256 = before;
  e.copy = std::move(a);
  e.used = ++tick_;
  entries_.emplace(name, std::move(e));
  ++reads_;
  trim_copies();
}

bool AdapterTable::remove(const std::string& name) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(name);
  BATON_CHECK(it != entries_.end(), usage_error, "no adapter is served as '", name, "'");
  if (it->second.in_flight > 0) return false;
  // Its slot is free for the next adapter (the stage keeps the old weights until then, and no
  // request can reach them: none names this adapter any more).
  if (it->second.slot >= 0) owner_[static_cast<std::size_t>(it->second.slot - 1)].clear();
  entries_.erase(it);
  return_free_pages();
  return true;
}

bool AdapterTable::contains(const std::string& name) const {
  const std::lock_guard lock(mutex_);
  return entries_.contains(name);
}

bool AdapterTable::acquire(const std::string& name) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(name);
  if (it == entries_.end()) return false;
  ++it->second.in_flight;
  return true;
}

void AdapterTable::release(const std::string& name) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(name);
  if (it != entries_.end() && it->second.in_flight > 0) --it->second.in_flight;
}

std::optional<int> AdapterTable::place(const std::string& name) {
  const std::lock_guard lock(mutex_);
  const auto it = entries_.find(name);
  // acquire() counted the request in, so remove() cannot have taken it away.
  BATON_CHECK(it != entries_.end(), usage_error, "no adapter is served as '", name, "'");
  Entry& e = it->second;
  e.used = ++tick_;
  if (e.slot >= 0) return e.slot;
  // A free slot, else the least recently used one whose adapter has nothing in flight: a slot
  // with a request on it keeps its weights until that request ends.
  int best = -1;
  std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t k = 0; k < owner_.size(); ++k) {
    if (owner_[k].empty()) {
      best = static_cast<int>(k);
      break;
    }
    const Entry& o = entries_.at(owner_[k]);
    if (o.in_flight == 0 && o.used < oldest) {
      oldest = o.used;
      best = static_cast<int>(k);
    }
  }
  if (best < 0) return std::nullopt;
  std::unique_ptr<RelayAdapter> a = std::move(e.copy);
  if (!a) {
    // Evicted from memory: read again, and only if the files are still the ones registered.
    const std::string now = adapter_content_hash(e.path);
    BATON_CHECK(now == e.sha256, config_error, "adapter '", name, "': the files in ",
                e.path.string(), " changed since it was loaded (sha256 ", e.sha256, ", now ", now,
                "); load it again under a name");
    a = relay_.load_adapter(e.path);
    BATON_CHECK(adapter_content_hash(e.path) == e.sha256, config_error, "adapter '", name,
                "': its files changed while they were read again");
    ++reads_;
  }
  const int stage = best + 1;
  std::unique_ptr<RelayAdapter> old = relay_.swap_adapter(stage, std::move(a));
  std::string& owner = owner_[static_cast<std::size_t>(best)];
  if (!owner.empty()) {
    Entry& prev = entries_.at(owner);
    prev.slot = -1;
    prev.copy = std::move(old);
    ++evictions_;
  }
  owner = name;
  e.slot = stage;
  ++loads_;
  trim_copies();
  old.reset();  // the weights of a removed adapter that held the slot, if any
  return_free_pages();
  return stage;
}

int AdapterTable::in_memory() const {
  int n = 0;
  for (const auto& [name, e] : entries_) n += (e.slot >= 0 || e.copy) ? 1 : 0;
  return n;
}

void AdapterTable::trim_copies() {
  while (in_memory() > limits_.max_cpu_loras) {
    Entry* victim = nullptr;
    for (auto& [name, e] : entries_)
      if (e.copy && (!victim || e.used < victim->used)) victim = &e;
    if (!victim) return;  // every adapter in memory sits in a slot
    victim->copy.reset();
  }
}

AdapterSnapshot AdapterTable::snapshot() const {
  const std::lock_guard lock(mutex_);
  AdapterSnapshot s;
  s.max_loras = limits_.max_loras;
  s.max_cpu_loras = limits_.max_cpu_loras;
  s.loads = loads_;
  s.evictions = evictions_;
  s.reads = reads_;
  for (const auto& [name, e] : entries_)
    s.adapters.push_back(
        {name, e.path.string(), e.sha256, e.slot, e.slot >= 0 || e.copy != nullptr, e.in_flight});
  return s;
}

}  // namespace baton::serve
