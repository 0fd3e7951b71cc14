// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// A three-stage relay — extract → reason → verify — built in code on one frozen model.
//
//   three_stage_relay MODEL_DIR EXTRACT_ADAPTER REASON_ADAPTER VERIFY_ADAPTER [ids...]
//
// With the golden test models (shipped in tests/golden):
//   three_stage_relay tests/golden/qwen-c tests/golden/qwen-c-lora-qv
//                     tests/golden/qwen-c-lora-all tests/golden/qwen-c-lora-qv 88 160 301
// (one command line)
//
// Those models have no tokenizer, so prompts here are token ids; with a real model, build
// them with baton::Tokenizer and baton::ChatMl (docs/relay.md shows the text version).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "baton/baton.hpp"

using namespace baton;
using namespace baton::wire;  // the segments: ids(...), request, out<K>, feedback<K>

// 1. Choose the types once. Everything below is checked against them at compile time.
using Model = BaseModel<host, f32>;                       // weights as stored in the files
using Slice = LoraSlice<16, host>;                        // adapters of rank <= 16
using Cache = KvBuffer<layout::HeadMajor<f32, 8>, host>;  // K/V in f32, head_dim 8 (qwen-c)

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: " << argv[0]
              << " MODEL EXTRACT_ADAPTER REASON_ADAPTER VERIFY_ADAPTER [ids...]\n";
    return 2;
  }
  try {
    // 2. Load the frozen base model once; every stage shares it (by reference).
    const Model model = load_model<host, f32>(argv[1]);

    // 3. Each stage owns its adapter, its KV cache (prefix region + one slot here), its fixed
    //    prefix (think: system prompt + few-shot examples, as token ids) and its input wiring.
    const KvShape shape{.prefix_capacity = 32, .tail_capacity = 128, .slots = 1};
    auto extract = make_stage<Cache>("extract", model, Slice::load(argv[2], model), shape,
                                     /*prefix=*/{5, 6, 7, 8},
                                     input(ids({10}), request, ids({11})),  // "Q: <request> Facts:"
                                     {.max_new = 8});
    auto reason = make_stage<Cache>("reason", model, Slice::load(argv[3], model), shape,
                                    /*prefix=*/{9, 9, 12},
                                    // the request, extract's output, and verify's previous
                                    // verdict (empty in the first cycle)
                                    input(request, out<0>, feedback<2>), {.max_new = 10});
    auto verify = make_stage<Cache>("verify", model, Slice::load(argv[4], model), shape,
                                    /*prefix=*/{3, 4}, input(out<1>), {.max_new = 3});

    // 4. The relay. Reading a later stage (say out<2> in extract) would not compile.
    Relay relay{extract, reason, verify};

    // 5. Pre-warm: each stage runs its prefix through the model once, with its own adapter.
    relay.prewarm();

    // 6. Run a request. If verify's output does not start with the gate's ids, the relay
    //    loops from `reason` (the default), feeding the verdict back, up to 3 cycles.
    std::vector<std::int32_t> request = {88, 160, 301};
    if (argc > 5) {
      request.clear();
      for (int i = 5; i < argc; ++i) request.push_back(std::stoi(argv[i]));
    }
    const RelayResult r = relay.run(request, {.max_cycles = 3, .gate = starts_with({312})});

    // 7. Every stage's output of every cycle, with timings, however the run ended.
    for (const StageRun& s : r.runs) {
      std::cout << "cycle " << s.cycle << "  " << s.name << ":";
      for (std::int32_t id : s.ids) std::cout << ' ' << id;
      std::cout << "   (" << s.ms << " ms)\n";
    }
    std::cout << "verdict " << verdict_name(r.verdict) << " after " << r.cycles << " cycle(s), "
              << r.total_ms << " ms in all\n";
    return 0;
  } catch (const baton::error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
