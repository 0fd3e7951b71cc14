// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Batch invariance (docs/batching.md): a request's logits and tokens are bit-identical whether
// it runs alone or beside up to 63 others, wherever it sits in the batch, however its prefill is
// chunked and whenever it arrives. Random batches on golden model qwen-c (GQA 8/2, two of
// llama.cpp's golden adapters and none), every storage (f32, bf16, f16, q8_0, q4_0) on the host
// (a two-thread HostContext with its default products: bf16 ones where the CPU has them), f32,
// bf16 and q8_0 on the host grid (the CUDA forward's composition). Each request alone: its whole
// prompt in one forward, then one token a step. Batched: requests arrive at random steps; each
// step every request in flight gives one row — a random chunk of what is left of its prompt, or
// its last token — in a shuffled order, through forward_batch; every row that completes a
// prompt or decodes is compared with the request's own step, bit for bit (memcmp), and decodes
// on with its own argmax.
//
// Mutation checks (2026-12-05), each alone, this program rebuilt:
//   the one-row shortcut back: up to two rows take the f32 products while more take the bf16
//   ones (host_matmul.hpp)                     -> host bf16 (AMX) and (vdpbf16ps) fail
//   a tile of one row adds its lanes one by one instead of hsum8(fold16(.)) (host_dot.hpp's
//   store_sums)                                -> every host case fails (the block formats and
//                                                 AMX through the adapters' f32 products)
// Again 2026-12-06, with the bf16 products' activations split into hi + lo terms: up to two
//   rows through the f32 products, more through the bf16 ones -> host bf16 fails (319 of its
//   rows differ from the request alone in the first trial).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "baton/kv/kv_buffer.hpp"
#include "baton/model/forward_batch.hpp"
#include "baton/model/host_forward.hpp"
#include "baton/model/host_grid_forward.hpp"
#include "support/test_paths.hpp"

using namespace baton;

namespace {

constexpr int kGenerate = 5;  ///< tokens each request generates (logits rows compared)
constexpr int kMaxPrompt = 20;

template <Backend B, WeightStorage S>
struct World {
  explicit World(const std::filesystem::path& dir) : model(load_model<B, S>(dir)) {}
  std::filesystem::path root = BATON_GOLDEN_DIR;
  BaseModel<B, S> model;
  LoraSlice<16, B> qv = LoraSlice<16, B>::load(root / "qwen-c-lora-qv", model.config());
  LoraSlice<16, B> all = LoraSlice<16, B>::load(root / "qwen-c-lora-all", model.config());
  LoraSlice<16, B> none = LoraSlice<16, B>::none(model.config());
};

struct Request {
  std::vector<std::int32_t> prompt;
  int arrival;  ///< the batched run's step it joins at
  int adapter;  ///< 0: qv, 1: all, 2: none
};

/// What a request produces: each step's logits row and the greedy ids.
struct Outcome {
  std::vector<std::vector<float>> logits;
  std::vector<std::int32_t> ids;
};

template <Backend B, WeightStorage S>
const LoraSlice<16, B>& slice_of(const World<B, S>& w, int adapter) {
  return adapter == 0 ? w.qv : adapter == 1 ? w.all : w.none;
}

/// The request alone: its prompt in one forward, then a token a step.
template <Backend B, WeightStorage S>
Outcome alone(const World<B, S>& w, Workspace<B>& ws, const Request& r) {
  KvBuffer<layout::HeadMajor<f32, 8>, B> cache(w.model.config(), {0, kMaxPrompt + kGenerate, 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Outcome o;
  std::vector<std::int32_t> in = r.prompt;
  int pos = 0;
  for (int g = 0; g < kGenerate; ++g) {
    const auto lg = forward(w.model, ws, slice_of(w, r.adapter), cache, KvTarget::in_slot(0), pos,
                            std::span<const std::int32_t>(in), Logits::last);
    o.logits.emplace_back(lg.begin(), lg.end());
    o.ids.push_back(kernels::argmax(o.logits.back().data(), w.model.config().vocab_size));
    pos += static_cast<int>(in.size());
    in = {o.ids.back()};
  }
  return o;
}

/// `count` random requests (prompts of 1..kMaxPrompt ids, arrivals in the first 6 steps).
std::vector<Request> random_requests(int count, int vocab, std::mt19937& rng) {
  std::uniform_int_distribution<int> len(1, kMaxPrompt), id(0, vocab - 1), arrive(0, 6), ad(0, 2);
  std::vector<Request> rs(static_cast<std::size_t>(count));
  for (Request& r : rs) {
    r.prompt.resize(static_cast<std::size_t>(len(rng)));
    for (auto& t : r.prompt) t = id(rng);
    r.arrival = arrive(rng);
    r.adapter = ad(rng);
  }
  return rs;
}

/// The requests batched: staggered arrivals, random prefill chunks, shuffled rows; every logits
/// row compared with the request alone, bit for bit. Returns the rows compared.
template <Backend B, WeightStorage S>
int check_batched(const World<B, S>& w, Workspace<B>& ws, const std::vector<Request>& rs,
                  const std::vector<Outcome>& want, std::mt19937& rng, const std::string& what) {
  using Slice = LoraSlice<16, B>;
  using BCache = KvBuffer<layout::HeadMajor<f32, 8>, B>;
  using Row = BatchRow<Slice, BCache>;
  const int n = static_cast<int>(rs.size()), V = w.model.config().vocab_size;
  BCache cache(w.model.config(), {0, kMaxPrompt + kGenerate, n});
  cache.reset_prefix();
  cache.freeze_prefix();
  std::vector<int> fed(rs.size(), 0), pos(rs.size(), 0);
  std::vector<Outcome> got(rs.size());
  int compared = 0, mismatches = 0;
  for (int step = 0;; ++step) {
    std::vector<int> live;  // the requests in flight, in this step's (shuffled) row order
    for (int i = 0; i < n; ++i)
      if (rs[i].arrival <= step && static_cast<int>(got[i].ids.size()) < kGenerate)
        live.push_back(i);
    if (live.empty()) {
      if (std::all_of(got.begin(), got.end(),
                      [](const Outcome& o) { return o.ids.size() == kGenerate; }))
        break;
      continue;  // nobody has arrived yet
    }
    std::shuffle(live.begin(), live.end(), rng);
    std::vector<std::vector<std::int32_t>> inputs(live.size());
    std::vector<Row> rows;
    for (std::size_t k = 0; k < live.size(); ++k) {
      const int i = live[k];
      const int left = static_cast<int>(rs[i].prompt.size()) - fed[i];
      if (left > 0) {  // a random chunk of the prompt; logits when it ends the prompt
        const int chunk = std::uniform_int_distribution<int>(1, left)(rng);
        inputs[k].assign(rs[i].prompt.begin() + fed[i], rs[i].prompt.begin() + fed[i] + chunk);
        fed[i] += chunk;
      } else {
        inputs[k] = {got[i].ids.back()};
      }
      const Slice* s = rs[i].adapter == 2 ? nullptr : &slice_of(w, rs[i].adapter);
      rows.push_back({s, &cache, KvTarget::in_slot(i), pos[i], inputs[k],
                      fed[i] == static_cast<int>(rs[i].prompt.size())});
      pos[i] += static_cast<int>(inputs[k].size());
    }
    const auto lg = forward_batch(w.model, ws, std::span<const Row>(rows));
    std::size_t at = 0;
    for (std::size_t k = 0; k < live.size(); ++k) {
      if (!rows[k].logits) continue;
      const int i = live[k];
      const float* row = lg.data() + at * static_cast<std::size_t>(V);
      ++at;
      const std::size_t g = got[i].ids.size();
      const std::vector<float>& ref = want[i].logits[g];
      const bool same = std::memcmp(row, ref.data(), ref.size() * sizeof(float)) == 0;
      if (!same && mismatches < 3)
        MESSAGE(what << ": request " << i << " of " << n << ", step " << g << " (row " << k
                     << " of " << live.size() << ") differs from the request alone");
      mismatches += !same;
      ++compared;
      got[i].ids.push_back(kernels::argmax(row, V));
    }
  }
  CHECK_MESSAGE(mismatches == 0, what << ": " << mismatches << " of " << compared
                                      << " logits rows differ from the requests alone");
  for (int i = 0; i < n; ++i) CHECK_MESSAGE(got[i].ids == want[i].ids, what << ": request " << i);
  return compared;
}

/// `trials` random batches of 1..max_requests requests on storage S of backend B.
template <Backend B, WeightStorage S>
void check_storage(const char* dir, int max_requests, int trials, unsigned seed, HostContext* ctx,
                   const std::string& what) {
  const World<B, S> w(std::filesystem::path(BATON_GOLDEN_DIR) / dir);
  Workspace<B> ws_alone, ws_batch;
  if constexpr (std::is_same_v<B, host>) {
    ws_alone.extras.bind(*ctx);
    ws_batch.extras.bind(*ctx);
  }
  std::mt19937 rng(seed);
  int rows = 0;
  for (int t = 0; t < trials; ++t) {
    // the first trial the largest batch, then random sizes
    const int count =
        t == 0 ? max_requests : std::uniform_int_distribution<int>(1, max_requests)(rng);
    const std::vector<Request> rs = random_requests(count, w.model.config().vocab_size, rng);
    std::vector<Outcome> want;
    for (const Request& r : rs) want.push_back(alone(w, ws_alone, r));
    rows += check_batched(
        w, ws_batch, rs, want, rng,
        what + " trial " + std::to_string(t) + " (" + std::to_string(count) + " requests)");
  }
  MESSAGE(what << ": " << rows << " logits rows compared with the requests alone");
}

}  // namespace

TEST_CASE("host: a request's logits and ids do not depend on the batch, on every storage") {
  HostContext ctx({.threads = 2});  // the default products of this CPU
  const std::string products = ctx.bf16_products() ? (ctx.amx() ? "bf16 amx" : "bf16") : "f32";
  check_storage<host, f32>("qwen-c", 64, 4, 1, &ctx, "host f32");
  check_storage<host, bf16>("qwen-c-bf16", 64, 4, 2, &ctx, "host bf16 (" + products + ")");
  check_storage<host, f16>("qwen-c", 64, 3, 3, &ctx, "host f16");
  check_storage<host, q8_0>("qwen-c", 64, 3, 4, &ctx, "host q8_0");
  check_storage<host, q4_0>("qwen-c", 64, 3, 5, &ctx, "host q4_0");
}

TEST_CASE("host: the same with the f32 products, and with vdpbf16ps instead of AMX") {
  HostContext f32_products({.threads = 2, .bf16_products = false});
  check_storage<host, bf16>("qwen-c-bf16", 64, 2, 6, &f32_products, "host bf16 (f32 products)");
  if (host_simd::cpu_supports_amx_bf16()) {
    HostContext dp({.threads = 2, .amx = false});
    check_storage<host, bf16>("qwen-c-bf16", 64, 2, 7, &dp, "host bf16 (vdpbf16ps)");
  }
}

TEST_CASE("host grid: a request's logits and ids do not depend on the batch") {
  check_storage<host_grid, f32>("qwen-c", 12, 2, 8, nullptr, "host grid f32");
  check_storage<host_grid, bf16>("qwen-c-bf16", 12, 2, 9, nullptr, "host grid bf16");
  check_storage<host_grid, q8_0>("qwen-c", 12, 2, 10, nullptr, "host grid q8_0");
}
