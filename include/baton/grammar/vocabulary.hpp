// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The token byte strings a grammar is lifted over, with the prefix trie that the
/// lifting walks, and a hash that keys compiled grammars by vocabulary.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/grammar/grammar_spec.hpp"

namespace baton::grammar {

/// The vocabulary's tokens in a prefix trie, stored in preorder: a node's subtree is the
/// index range [i, end[i]), so a walk can skip a subtree in one step. Node i reads byte
/// `byte[i]` at depth `depth[i]` (the root, depth 0, is not stored) and ends the tokens
/// `ids[first_id[i] .. first_id[i + 1])`.
struct VocabTrie {
  std::vector<std::uint8_t> byte;
  std::vector<std::uint16_t> depth;
  std::vector<std::uint32_t> end;
  std::vector<std::uint32_t> first_id;  // size = nodes + 1
  std::vector<std::int32_t> ids;
  std::size_t max_depth = 0;
};

/// The token byte strings of a vocabulary (index = token id; an empty string marks an id
/// that no grammar allows: added and special tokens, holes) and the ids that end a
/// generation, allowed exactly in accepting states. Immutable after construction.
class Vocabulary {
 public:
  /// `bytes[id]` spells token id; `eos_ids` end generation (each < bytes.size()).
  Vocabulary(std::vector<std::string> bytes, std::vector<std::int32_t> eos_ids)
      : bytes_(std::move(bytes)), eos_(std::move(eos_ids)) {
    BATON_CHECK(bytes_.size() < (std::size_t{1} << 30), grammar_error, "vocabulary of ",
                bytes_.size(), " tokens is too large");
    for (const std::int32_t e : eos_)
      BATON_CHECK(e >= 0 && static_cast<std::size_t>(e) < bytes_.size(), grammar_error,
                  "end-of-sequence id ", e, " is outside the vocabulary (size ", bytes_.size(),
                  ")");
    for (const std::int32_t e : eos_) bytes_[static_cast<std::size_t>(e)].clear();
    build_trie();
    hash_ = 0xcbf29ce484222325ull;
    for (const std::string& b : bytes_) {
      const auto n = static_cast<std::uint32_t>(b.size());
      hash_ = fnv1a(std::string_view(reinterpret_cast<const char*>(&n), sizeof n), hash_);
      hash_ = fnv1a(b, hash_);
    }
    for (const std::int32_t e : eos_)
      hash_ = fnv1a(std::string_view(reinterpret_cast<const char*>(&e), sizeof e), hash_);
  }

  std::size_t size() const { return bytes_.size(); }
  std::string_view bytes(std::int32_t id) const { return bytes_[static_cast<std::size_t>(id)]; }
  std::span<const std::int32_t> eos_ids() const { return eos_; }
  const VocabTrie& trie() const { return trie_; }
  /// Hash of every token's bytes and the end-of-sequence ids.
  std::uint64_t hash() const { return hash_; }

 private:
  void build_trie() {
    std::vector<std::int32_t> order;
    for (std::size_t id = 0; id < bytes_.size(); ++id)
      if (!bytes_[id].empty()) order.push_back(static_cast<std::int32_t>(id));
    std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      const auto& x = bytes_[static_cast<std::size_t>(a)];
      const auto& y = bytes_[static_cast<std::size_t>(b)];
      return x != y ? x < y : a < b;
    });
    // Preorder: each token adds the nodes of its bytes past the prefix it shares with the
    // previous token in sorted order; `path` holds the node index at each depth.
    std::vector<std::uint32_t> path;
    std::string_view prev;
    VocabTrie& t = trie_;
    const auto close_to = [&](std::size_t depth) {
      while (path.size() > depth) {
        t.end[path.back()] = static_cast<std::uint32_t>(t.byte.size());
        path.pop_back();
      }
    };
    std::vector<std::int32_t> node_of_token(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const std::string_view b = bytes_[static_cast<std::size_t>(order[k])];
      BATON_CHECK(b.size() < 65535, grammar_error, "token ", order[k], " is ", b.size(),
                  " bytes long");
      std::size_t common = 0;
      while (common < prev.size() && common < b.size() && prev[common] == b[common]) ++common;
      close_to(common);
      for (std::size_t d = common; d < b.size(); ++d) {
        path.push_back(static_cast<std::uint32_t>(t.byte.size()));
        t.byte.push_back(static_cast<std::uint8_t>(b[d]));
        t.depth.push_back(static_cast<std::uint16_t>(d + 1));
        t.end.push_back(0);
      }
      t.max_depth = std::max(t.max_depth, b.size());
      node_of_token[k] = static_cast<std::int32_t>(path.back());
      prev = b;
    }
    close_to(0);
    // Token ids per node (sorted order visits a node's tokens consecutively).
    t.first_id.assign(t.byte.size() + 1, 0);
    for (const std::int32_t node : node_of_token) ++t.first_id[static_cast<std::size_t>(node) + 1];
    std::partial_sum(t.first_id.begin(), t.first_id.end(), t.first_id.begin());
    t.ids.resize(order.size());
    std::vector<std::uint32_t> fill(t.first_id.begin(), t.first_id.end() - 1);
    for (std::size_t k = 0; k < order.size(); ++k)
      t.ids[fill[static_cast<std::size_t>(node_of_token[k])]++] = order[k];
  }

  std::vector<std::string> bytes_;
  std::vector<std::int32_t> eos_;
  VocabTrie trie_;
  std::uint64_t hash_ = 0;
};

}  // namespace baton::grammar
