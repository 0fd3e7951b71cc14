// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Byte-level BPE: the vocabulary, the merge table keyed by (id_a, id_b), and the
/// word -> ids merge loop (lowest merge rank first, leftmost on ties, as Hugging Face does).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/text/byte_level.hpp"

namespace baton::text {

/// Hash for string keys that also accepts string_view, so lookups do not allocate.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

/// String -> id map with allocation-free string_view lookups.
using TokenIdMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

/// What merging the pair (a, b) produces and how early it applies (lower rank = earlier).
struct MergeResult {
  std::uint32_t rank;
  std::int32_t merged;
};

/// Open-addressing hash table (id_a, id_b) -> MergeResult. Built once, read-only afterwards;
/// one probe sequence over a flat array is what the merge loop spends most of its time on.
class MergeTable {
 public:
  void build(const std::vector<std::pair<std::uint64_t, MergeResult>>& entries) {
    std::size_t cap = 16;
    while (cap < entries.size() * 2) cap <<= 1;
    mask_ = cap - 1;
    keys_.assign(cap, kEmpty);
    values_.assign(cap, MergeResult{0, 0});
    for (const auto& [key, value] : entries) {
      std::size_t slot = index(key);
      while (keys_[slot] != kEmpty && keys_[slot] != key) slot = (slot + 1) & mask_;
      // A repeated merge keeps its first (lowest) rank, as a first-wins map insert would.
      if (keys_[slot] == key) continue;
      keys_[slot] = key;
      values_[slot] = value;
    }
  }

  /// The merge of (a, b), or nullptr when the pair never merges.
  const MergeResult* find(std::int32_t a, std::int32_t b) const {
    if (keys_.empty()) return nullptr;
    const std::uint64_t key = pack(a, b);
    for (std::size_t slot = index(key);; slot = (slot + 1) & mask_) {
      if (keys_[slot] == key) return &values_[slot];
      if (keys_[slot] == kEmpty) return nullptr;
    }
  }

  static std::uint64_t pack(std::int32_t a, std::int32_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
           static_cast<std::uint32_t>(b);
  }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // ids are >= 0, never all ones
  std::size_t index(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  std::vector<std::uint64_t> keys_;
  std::vector<MergeResult> values_;
  std::size_t mask_ = 0;
};

/// Scratch buffers for one merge call, reused across calls so merging does not allocate.
struct BpeScratch {
  std::vector<std::int32_t> ids;
  std::vector<std::uint32_t> ranks;
  std::vector<std::int32_t> prev, next;
  std::string symbols;
};

/// The byte-level BPE model of a tokenizer.json (`model.type` "BPE"). Immutable after
/// construction; safe to share between threads.
class BpeModel {
 public:
  /// Words of up to this many bytes use the quadratic scan (cheap, cache-friendly); longer
  /// ones use a heap so a pathological run (10k spaces) stays O(n log n).
  static constexpr std::size_t kScanLimit = 48;

  BpeModel() = default;

  /// `vocab`: token string -> id; `merges`: (left, right) token strings in priority order.
  /// `source` names the file in error messages.
  BpeModel(TokenIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           bool ignore_merges, std::optional<std::int32_t> unk_id, std::string_view source)
      : vocab_(std::move(vocab)), ignore_merges_(ignore_merges), unk_id_(unk_id) {
    std::vector<std::pair<std::uint64_t, MergeResult>> entries;
    entries.reserve(merges.size());
    std::string joined;
    for (std::size_t rank = 0; rank < merges.size(); ++rank) {
      const auto& [left, right] = merges[rank];
      const auto a = vocab_.find(left), b = vocab_.find(right);
      joined.assign(left).append(right);
      const auto m = vocab_.find(joined);
      BATON_CHECK(a != vocab_.end() && b != vocab_.end(), tokenizer_error, source,
                  ": model.merges[", rank, "] (\"", ::baton::detail::excerpt(left), "\", \"",
                  ::baton::detail::excerpt(right), "\") uses a token that is not in model.vocab");
      BATON_CHECK(m != vocab_.end(), tokenizer_error, source, ": model.merges[", rank,
                  "] merges into \"", ::baton::detail::excerpt(joined),
                  "\", which is not in model.vocab");
      entries.push_back({MergeTable::pack(a->second, b->second),
                         MergeResult{static_cast<std::uint32_t>(rank), m->second}});
    }
    merges_.build(entries);
    for (int b = 0; b < 256; ++b) {
      const auto it = vocab_.find(alphabet_.symbol(static_cast<std::uint8_t>(b)));
      byte_id_[b] = it == vocab_.end() ? -1 : it->second;
    }
  }

  const TokenIdMap& vocab() const { return vocab_; }
  const ByteLevelAlphabet& alphabet() const { return alphabet_; }
  bool ignore_merges() const { return ignore_merges_; }
  /// The id of a byte's one-symbol token, or -1 when the vocabulary lacks it.
  std::int32_t byte_id(std::uint8_t b) const { return byte_id_[b]; }

  /// Appends the ids of one pre-tokenized word (raw bytes, not yet byte-level mapped).
  void encode_word(std::string_view word, std::vector<std::int32_t>& out,
                   BpeScratch& scratch) const {
    if (word.empty()) return;
    if (ignore_merges_) {
      // A word that is already one vocabulary entry is that entry, merges or not.
      scratch.symbols.clear();
      alphabet_.encode_append(word, scratch.symbols);
      if (const auto it = vocab_.find(std::string_view(scratch.symbols)); it != vocab_.end()) {
        out.push_back(it->second);
        return;
      }
    }
    auto& ids = scratch.ids;
    ids.clear();
    for (const char c : word) {
      const std::int32_t id = byte_id_[static_cast<std::uint8_t>(c)];
      // Hugging Face drops a symbol missing from the vocabulary when there is no unk token.
      if (id >= 0) {
        ids.push_back(id);
      } else if (unk_id_) {
        ids.push_back(*unk_id_);
      }
    }
    if (ids.size() <= kScanLimit) {
      merge_scan(scratch);
    } else {
      merge_heap(scratch);
    }
    out.insert(out.end(), ids.begin(), ids.end());
  }

  /// Forces one merge strategy (tests check that both agree).
  void encode_word_with(std::string_view word, std::vector<std::int32_t>& out, BpeScratch& s,
                        bool heap) const {
    s.ids.clear();
    for (const char c : word)
      if (byte_id_[static_cast<std::uint8_t>(c)] >= 0)
        s.ids.push_back(byte_id_[static_cast<std::uint8_t>(c)]);
    heap ? merge_heap(s) : merge_scan(s);
    out.insert(out.end(), s.ids.begin(), s.ids.end());
  }

 private:
  static constexpr std::uint32_t kNoMerge = ~std::uint32_t{0};

  std::uint32_t rank_of(std::int32_t a, std::int32_t b) const {
    const MergeResult* m = merges_.find(a, b);
    return m ? m->rank : kNoMerge;
  }

  // Repeatedly merge the lowest-ranked adjacent pair (leftmost on ties). ranks[i] caches the
  // rank of (ids[i], ids[i+1]) so each round does one linear min scan and two lookups.
  void merge_scan(BpeScratch& s) const {
    auto& ids = s.ids;
    auto& ranks = s.ranks;
    if (ids.size() < 2) return;
    ranks.resize(ids.size() - 1);
    for (std::size_t i = 0; i + 1 < ids.size(); ++i) ranks[i] = rank_of(ids[i], ids[i + 1]);
    while (!ranks.empty()) {
      std::size_t best = 0;
      for (std::size_t i = 1; i < ranks.size(); ++i)
        if (ranks[i] < ranks[best]) best = i;
      if (ranks[best] == kNoMerge) break;
      ids[best] = merges_.find(ids[best], ids[best + 1])->merged;
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(best) + 1);
      ranks.erase(ranks.begin() + static_cast<std::ptrdiff_t>(best));
      if (best > 0) ranks[best - 1] = rank_of(ids[best - 1], ids[best]);
      if (best < ranks.size()) ranks[best] = rank_of(ids[best], ids[best + 1]);
    }
  }

  // Same order as merge_scan with a heap of candidate pairs over a linked list of symbols;
  // stale entries (a side already merged away) are skipped when popped.
  void merge_heap(BpeScratch& s) const {
    auto& ids = s.ids;
    const std::size_t n = ids.size();
    if (n < 2) return;
    auto& prev = s.prev;
    auto& next = s.next;
    prev.resize(n);
    next.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      prev[i] = static_cast<std::int32_t>(i) - 1;
      next[i] = i + 1 < n ? static_cast<std::int32_t>(i + 1) : -1;
    }
    struct Candidate {
      std::uint32_t rank;
      std::int32_t pos;
      std::int32_t left, right;  // ids at push time: a mismatch later means it is stale
      bool operator>(const Candidate& o) const {
        return rank != o.rank ? rank > o.rank : pos > o.pos;
      }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto push = [&](std::int32_t pos) {
      if (pos < 0 || next[pos] < 0) return;
      const std::uint32_t r = rank_of(ids[pos], ids[next[pos]]);
      if (r != kNoMerge) heap.push({r, pos, ids[pos], ids[next[pos]]});
    };
    for (std::size_t i = 0; i + 1 < n; ++i) push(static_cast<std::int32_t>(i));
    std::vector<bool> dead(n, false);
    while (!heap.empty()) {
      const Candidate c = heap.top();
      heap.pop();
      if (dead[c.pos] || next[c.pos] < 0) continue;
      const std::int32_t right = next[c.pos];
      if (ids[c.pos] != c.left || ids[right] != c.right) continue;
      ids[c.pos] = merges_.find(c.left, c.right)->merged;
      dead[right] = true;
      next[c.pos] = next[right];
      if (next[right] >= 0) prev[next[right]] = c.pos;
      push(prev[c.pos]);
      push(c.pos);
    }
    std::size_t w = 0;
    for (std::int32_t i = 0; i >= 0; i = next[i]) ids[w++] = ids[i];
    ids.resize(w);
  }

  TokenIdMap vocab_;
  MergeTable merges_;
  ByteLevelAlphabet alphabet_;
  std::int32_t byte_id_[256] = {};
  bool ignore_merges_ = false;
  std::optional<std::int32_t> unk_id_;
};

}  // namespace baton::text
