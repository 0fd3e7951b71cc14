// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Relays described in JSON: field errors, the run-time relay against the no-cache reference,
// and a text relay (ChatML prefix, text template segments, stop text, text gate) whose ids
// come from a tokenizer while the stages still hand ids on; a stage's adapter replaced at run
// time (a server's adapter slots).
#include <doctest/doctest.h>

#include "baton/relay/runtime_relay_instances.hpp"  // build_relay, compiled once in dispatch/
#include "baton/text/relay_text.hpp"
#include "support/chatml_tokenizer.hpp"
#include "support/expect_error.hpp"
#include "support/not_run.hpp"
#include "support/relay_fixture.hpp"

using namespace baton;
using namespace baton::test;
using nlohmann::json;

namespace {

RelaySpec parse(const json& j) { return parse_relay_spec(j, "/cfg/relay.json"); }

std::vector<std::int32_t> kRequestIds() { return {11, 12, 13, 30, 31}; }

json two_stage() {
  return {{"model", "m"},
          {"stages",
           {{{"name", "a"}, {"input", {{{"request", true}}}}, {"max_new", 4}},
            {{"name", "b"}, {"input", {{{"out", "a"}}}}, {"max_new", 4}}}}};
}

}  // namespace

TEST_CASE("relay JSON: errors name the file and the field") {
  CHECK_NOTHROW(parse(two_stage()));
  CHECK(parse(two_stage()).model == "/cfg/m");

  json j = two_stage();
  j["stages"][0]["input"] = {{{"out", "b"}}};
  CHECK_THROWS_WITH_AS(
      parse(j),
      doctest::Contains("/cfg/relay.json: stages[0] ('a').input[0]: {\"out\": \"b\"}: a stage may "
                        "only read the output of an earlier stage"),
      config_error);
  j = two_stage();
  j["stages"][1]["input"] = {{{"out", "nope"}}};
  CHECK_THROWS_WITH_AS(
      parse(j),
      doctest::Contains("stages[1] ('b').input[0].out names stage 'nope', which does not exist"),
      config_error);
  j = two_stage();
  j["stages"][1]["input"] = {{{"feedback", 7}}};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("names stage 7 but the relay has stages 0..1"),
                       config_error);
  j = two_stage();
  j["stages"][1]["name"] = "a";
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("stage name 'a' is used twice"), config_error);
  j = two_stage();
  j["stages"][0]["temperature"] = 0.7;
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("stages[0] ('a'): unknown field 'temperature'"),
                       config_error);
  j = two_stage();
  j["stages"][0]["input"] = {{{"request", true}, {"text", "x"}}};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("input[0] must be one of"), config_error);
  j = two_stage();
  j["stages"][0].erase("max_new");
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("missing required field 'max_new'"),
                       config_error);
  j = two_stage();
  j["gate"] = {{"starts_with", {1}}, {"contains", {2}}};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("gate needs exactly one of"), config_error);
  j = two_stage();
  j["gate"] = {{"stage", "a"}, {"starts_with", {1}}};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("the last stage gates the relay"), config_error);
  j = two_stage();
  j["stages"][0]["prefix"] = {1, -2};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("prefix holds -2, not a token id"),
                       config_error);
  j = two_stage();
  j["backend"] = "tpu";
  CHECK_THROWS_WITH_AS(parse(j),
                       doctest::Contains("/cfg/relay.json: field 'backend' = \"tpu\": a relay "
                                         "runs on \"host\" or \"cuda\""),
                       config_error);
  j["backend"] = 1;
  CHECK_THROWS_AS(parse(j), config_error);
  // "host" and "cuda" are read; without the field the program chooses.
  CHECK_FALSE(parse(two_stage()).backend);
  j["backend"] = "host";
  CHECK(parse(j).backend == "host");
  j["backend"] = "cuda";
  CHECK(parse(j).backend == "cuda");
  // A builder refuses a spec that asks for another backend, before loading anything (the
  // model path here does not exist), naming the file and the field.
  CHECK_THROWS_WITH_AS(build_relay(parse(j)),
                       doctest::Contains("/cfg/relay.json: field 'backend' = \"cuda\", but this "
                                         "relay is being built on \"host\""),
                       config_error);

  // "host": the host relay's thread pool and products.
  CHECK(parse(two_stage()).host.threads == 0);
  CHECK_FALSE(parse(two_stage()).host.bf16_products);
  j = two_stage();
  j["host"] = {{"threads", 3}, {"bf16_products", true}};
  CHECK(parse(j).host.threads == 3);
  CHECK(parse(j).host.bf16_products);
  j["host"] = 3;
  CHECK_THROWS_WITH_AS(
      parse(j), doctest::Contains("/cfg/relay.json: field 'host' must be an object"), config_error);
  j["host"] = {{"threads", -1}};
  const std::string range = "field 'host': 'threads' = -1 must be in [0, " +
                            std::to_string(ThreadPool::max_threads()) + "]";
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains(range.c_str()), config_error);
  j["host"] = {{"cores", 2}};
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("field 'host': unknown field 'cores'"),
                       config_error);
  j["host"] = {{"bf16_products", "yes"}};
  CHECK_THROWS_AS(parse(j), config_error);
  // "isa": the kernel family by name.
  CHECK_FALSE(parse(two_stage()).host.isa);
  j["host"] = {{"isa", "avx2"}};
  CHECK(parse(j).host.isa == host_simd::Isa::avx2);
  j["host"] = {{"isa", "portable"}};
  CHECK(parse(j).host.isa == host_simd::Isa::portable);
  j["host"] = {{"isa", "avx3"}};
  CHECK_THROWS_WITH_AS(parse(j),
                       doctest::Contains("/cfg/relay.json: field 'host': 'isa' = \"avx3\": the "
                                         "kernel family is \"avx512\", \"avx2\" or \"portable\""),
                       config_error);

  // Duplicate keys in the file are an error (a plain JSON reader would keep one silently).
  const auto dir = fresh_dir("relay_json_dup");
  std::ofstream(dir / "r.json") << R"({"model": "m", "model": "n", "stages": []})";
  CHECK_THROWS_WITH_AS(load_relay_spec(dir / "r.json"), doctest::Contains("duplicate key 'model'"),
                       format_error);

  // Text without a tokenizer cannot be built.
  j = two_stage();
  j["stages"][0]["input"] = {{{"text", "Q: "}}, {{"request", true}}};
  const RelaySpec text_spec = parse(j);
  CHECK(text_spec.has_text());
}

TEST_CASE("relay JSON: \"name\" and \"output\" (what `baton serve` calls a relay and answers)") {
  // Defaults: the file's name without .json, the last stage.
  RelaySpec spec = parse(two_stage());
  CHECK(served_name(spec) == "relay");
  CHECK(spec.output_stage == 1);
  json j = two_stage();
  j["name"] = "qa-2";
  j["output"] = "a";
  spec = parse(j);
  CHECK(served_name(spec) == "qa-2");
  CHECK(spec.output_stage == 0);
  j["output"] = 1;
  CHECK(parse(j).output_stage == 1);
  j["output"] = "c";
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("output names stage 'c', which does not exist"),
                       config_error);
  j = two_stage();
  for (const char* bad : {"", "two words", "quo\"te", "back\\slash"}) {
    CAPTURE(bad);
    j["name"] = bad;
    CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("field 'name'"), config_error);
  }
  j["name"] = 5;
  CHECK_THROWS_AS(parse(j), config_error);
}

TEST_CASE("a relay built from JSON equals the no-cache reference chain") {
  RelayFixture f("json");
  const json j = {
      {"model", "model"},
      {"stages",
       {{{"name", "extract"},
         {"adapter", "adapter0"},
         {"prefix", {3, 14, 15}},
         {"input", {{{"ids", {60}}}, {{"request", true}}}},
         {"max_new", 6}},
        {{"name", "reason"},
         {"adapter", "adapter1"},
         {"prefix", {2, 7}},
         {"input", {{{"request", true}}, {{"out", "extract"}}, {{"feedback", "verify"}}}},
         {"max_new", 7}},
        {{"name", "verify"},
         {"adapter", "adapter2"},
         {"input", {{{"out", 1}}, {{"ids", {62}}}}},
         {"max_new", 3}}}},
      {"gate", {{"starts_with", {63, 63, 63}}}},
      {"max_cycles", 2},
      {"host", {{"threads", 3}}},  // a pool of 3 on any machine
      {"backend", "host"}};        // the host builder agrees with the file
  std::ofstream(f.dir / "relay.json") << j.dump(2);
  const RelaySpec spec = load_relay_spec(f.dir / "relay.json");
  const auto relay = build_relay(spec);
  // The fixture's adapters say they were trained on "tiny"; the model folder is "model".
  REQUIRE(relay->warnings().size() == 3);
  CHECK(relay->warnings()[0].find("stage 'extract'") != std::string::npos);
  CHECK(relay->warnings()[0].find("trained on \"tiny\"") != std::string::npos);
  CHECK_THROWS_AS(relay->run(kRequestIds()), usage_error);  // cold
  // The stages run on the relay's own HostContext, sized by "host" (not on OpenMP).
  auto* on_host = dynamic_cast<baton::detail::BackendRuntimeRelay<host, f32, 8>*>(relay.get());
  REQUIRE(on_host != nullptr);
  HostContext& context = on_host->execution().context;
  CHECK(context.threads() == 3);
  // no "bf16_products" in the file: the context's default (on where the CPU has AVX512-BF16)
  CHECK(context.bf16_products() == (host_simd::best_isa() == host_simd::Isa::avx512 &&
                                    host_simd::cpu_supports_bf16_products()));
  relay->prewarm();
  const std::uint64_t prewarm_loops = context.pool().loops();  // short prefixes: maybe none
  const RelayResult r = relay->run(kRequestIds());
  CHECK(context.pool().loops() > prewarm_loops);  // the stages' forwards reached the pool

  const auto req = kRequestIds();
  const auto e = f.reference(0, {3, 14, 15}, concat({{60}, req}), 6);
  const auto r1 = f.reference(1, {2, 7}, concat({req, e}), 7);
  const auto v1 = f.reference(2, {}, concat({r1, {62}}), 3);
  const auto r2 = f.reference(1, {2, 7}, concat({req, e, v1}), 7);
  const auto v2 = f.reference(2, {}, concat({r2, {62}}), 3);
  REQUIRE(v1 != std::vector<std::int32_t>{63, 63, 63});
  CHECK(r.output(0) == e);
  CHECK(r.output(1, 1) == r1);
  CHECK(r.output(2, 1) == v1);
  CHECK(r.output(1, 2) == r2);
  CHECK(r.output(2, 2) == v2);
  CHECK(r.cycles == 2);
  CHECK(r.verdict == Verdict::fail);
  CHECK_THROWS_AS(relay->run(std::vector<std::int32_t>(513, 1)),
                  capacity_error);  // > max_request_tokens
}

TEST_CASE("\"host\": {\"bf16_products\": true} reaches the context, or names the CPU's lack") {
  RelayFixture f("json_bf16p");
  const json j = {
      {"model", "model"},
      {"host", {{"threads", 1}, {"bf16_products", true}}},
      {"stages", {{{"name", "only"}, {"input", {{{"request", true}}}}, {"max_new", 2}}}}};
  std::ofstream(f.dir / "relay.json") << j.dump(2);
  const RelaySpec spec = load_relay_spec(f.dir / "relay.json");
  if (host_simd::cpu_supports_bf16_products()) {
    const auto relay = build_relay(spec);
    auto* on_host = dynamic_cast<baton::detail::BackendRuntimeRelay<host, f32, 8>*>(relay.get());
    REQUIRE(on_host != nullptr);
    CHECK(on_host->execution().context.bf16_products());
    CHECK(on_host->execution().context.threads() == 1);
  } else {
    test::not_run("test_relay_config: a relay file's host.bf16_products reaching the context",
                  "this CPU lacks AVX-512 with AVX512-BF16 (the refusal is checked instead)");
    CHECK_THROWS_WITH_AS(build_relay(spec),
                         doctest::Contains("relay.json: field 'host': 'bf16_products' needs a CPU "
                                           "with AVX-512 and AVX512-BF16"),
                         config_error);
  }
}

TEST_CASE("\"host\": {\"isa\": ...} reaches the context, and a family it cannot run is refused") {
  RelayFixture f("json_isa");
  json j = {{"model", "model"},
            {"host", {{"threads", 1}, {"isa", "portable"}}},
            {"stages", {{{"name", "only"}, {"input", {{{"request", true}}}}, {"max_new", 2}}}}};
  std::ofstream(f.dir / "relay.json") << j.dump(2);
  auto relay = build_relay(load_relay_spec(f.dir / "relay.json"));
  auto* on_host = dynamic_cast<baton::detail::BackendRuntimeRelay<host, f32, 8>*>(relay.get());
  REQUIRE(on_host != nullptr);
  CHECK(on_host->execution().context.isa() == host_simd::Isa::portable);
  CHECK_FALSE(on_host->execution().context.bf16_products());  // AVX-512's only
  // The bf16 products with another family than avx512: refused, naming the field.
  j["host"] = {{"isa", "avx2"}, {"bf16_products", true}};
  std::ofstream(f.dir / "relay.json") << j.dump(2);
  CHECK_THROWS_WITH_AS(build_relay(load_relay_spec(f.dir / "relay.json")),
                       doctest::Contains("relay.json: field 'host': 'bf16_products' needs "
                                         "'isa' \"avx512\""),
                       config_error);
  if (!host_simd::cpu_supports(host_simd::Isa::avx512)) {
    j["host"] = {{"isa", "avx512"}};
    std::ofstream(f.dir / "relay.json") << j.dump(2);
    CHECK_THROWS_WITH_AS(build_relay(load_relay_spec(f.dir / "relay.json")),
                         doctest::Contains("relay.json: field 'host': 'isa' = \"avx512\", but "
                                           "this CPU does not run that kernel family"),
                         config_error);
  }
}

TEST_CASE("a text relay: ChatML prefix, text segments, stop text and a text gate") {
  int vocab = 0;
  const json tok_json = chatml_tokenizer_json(vocab);
  TinySpec s;
  s.vocab = vocab;
  s.seed = 77;
  const TinyModel tm = make_tiny_model(s);
  const auto dir = fresh_dir("relay_text");
  write_tiny_model(tm, dir / "model");
  std::ofstream(dir / "model" / "tokenizer.json") << tok_json.dump();
  const json j = {{"model", "model"},
                  {"stages",
                   {{{"name", "extract"},
                     {"system", "Extract the facts."},
                     {"examples", json::array({json::array({"the star", "star"})})},
                     {"input",
                      {{{"text", "<|im_start|>user\n"}},
                       {{"request", true}},
                       {{"text", "<|im_end|>\n<|im_start|>assistant\n"}}}},
                     {"max_new", 6},
                     {"stop_text", {"<|im_end|>"}}},
                    {{"name", "verify"},
                     {"system", "Say PASS or FAIL."},
                     {"input",
                      {{{"text", "<|im_start|>user\n"}},
                       {{"out", "extract"}},
                       {{"text", "<|im_end|>\n<|im_start|>assistant\n"}}}},
                     {"max_new", 3}}}},
                  {"gate", {{"starts_with", "PASS"}}}};
  std::ofstream(dir / "relay.json") << j.dump(2);
  RelaySpec spec = load_relay_spec(dir / "relay.json");
  REQUIRE(spec.has_text());
  const Tokenizer tok = Tokenizer::from_file(dir / "model" / "tokenizer.json");
  resolve_text(spec, tok);
  CHECK_FALSE(spec.has_text());

  // What the ids must be, built independently of resolve_text.
  const ChatMl chat(tok);
  const std::vector<ChatExample> shots = {{"the star", "star"}};
  CHECK(spec.stages[0].prefix == chat.prefix("Extract the facts.", shots));
  CHECK(spec.stages[0].stop == std::vector<std::int32_t>{chat.stop_id()});
  CHECK(spec.gate.needle.ids == tok.encode("PASS"));
  CHECK(spec.gate.needle.ids.size() == 1);  // "PASS" is one merged token in this vocabulary

  const auto relay = build_relay(spec);
  relay->prewarm();
  const auto request = tok.encode("the star");
  const RelayResult r = relay->run(request);

  const NaiveModel ref(tm);
  const auto user_open = tok.encode("<|im_start|>user\n");
  const auto user_close = tok.encode("<|im_end|>\n<|im_start|>assistant\n");
  std::vector<int> seq;
  for (const auto& part :
       {chat.prefix("Extract the facts.", shots), user_open, request, user_close})
    seq.insert(seq.end(), part.begin(), part.end());
  const auto e = ref.greedy(seq, 6, {chat.stop_id()});
  CHECK(r.output(0) == std::vector<std::int32_t>(e.begin(), e.end()));
  CHECK(!r.output(0).empty());  // something is handed on (the seed was checked for it)
  seq.clear();
  for (const auto& part : {chat.prefix("Say PASS or FAIL."), user_open, r.output(0), user_close})
    seq.insert(seq.end(), part.begin(), part.end());
  const auto v = ref.greedy(seq, 3);
  CHECK(r.output(1) == std::vector<std::int32_t>(v.begin(), v.end()));
}

TEST_CASE("build_relay runs any built-in family: a Qwen3 relay equals the naive reference") {
  // Qwen3 (per-head q/k norm, explicit head_dim 16 != hidden / heads) through the same
  // build_relay as Qwen2: the family comes from config.json's "architectures".
  TinySpec s;
  s.arch = Architecture::qwen3;
  s.head_dim = 16;
  s.rope_theta = 1000000.0;
  s.seed = 47;
  const TinyModel tm = make_tiny_model(s);
  const auto dir = fresh_dir("relay_qwen3");
  write_tiny_model(tm, dir / "model");
  const json j = {
      {"model", "model"},
      {"stages",
       {{{"name", "a"}, {"prefix", {3, 14, 15}}, {"input", {{{"request", true}}}}, {"max_new", 5}},
        {{"name", "b"}, {"input", {{{"out", "a"}}, {{"ids", {9}}}}}, {"max_new", 4}}}}};
  std::ofstream(dir / "relay.json") << j.dump();
  const auto relay = build_relay(load_relay_spec(dir / "relay.json"));
  CHECK(dynamic_cast<baton::detail::BackendRuntimeRelay<host, f32, 16, family::Qwen3>*>(
            relay.get()) != nullptr);
  relay->prewarm();
  const RelayResult r = relay->run(kRequestIds());
  const NaiveModel ref(tm);
  const auto req = kRequestIds();
  std::vector<int> seq = {3, 14, 15};
  seq.insert(seq.end(), req.begin(), req.end());
  const auto a = ref.greedy(seq, 5);
  CHECK(r.output(0) == std::vector<std::int32_t>(a.begin(), a.end()));
  seq.assign(a.begin(), a.end());
  seq.push_back(9);
  const auto b = ref.greedy(seq, 4);
  CHECK(r.output(1) == std::vector<std::int32_t>(b.begin(), b.end()));

  // A family this program does not build is refused by name, with the ones it does.
  nlohmann::json cfg = config_json(tm);
  cfg["architectures"] = {"MambaForCausalLM"};
  std::ofstream(dir / "model" / "config.json") << cfg.dump();
  EXPECT_ERROR(config_error, build_relay(load_relay_spec(dir / "relay.json")), "MambaForCausalLM",
               "Qwen3ForCausalLM");
}

TEST_CASE("\"storage\": the base model quantized at load; another value names the field") {
  json j = two_stage();
  CHECK_FALSE(parse(j).storage.has_value());
  j["storage"] = "q4_0";
  CHECK(parse(j).storage == Storage::q4_0);
  j["storage"] = "q5_0";
  CHECK_THROWS_WITH_AS(parse(j), doctest::Contains("relay.json: field 'storage' = \"q5_0\""),
                       config_error);

  RelayFixture f("json_storage");
  const json one = {
      {"model", "model"},
      {"storage", "q8_0"},
      {"stages", {{{"name", "only"}, {"input", {{{"request", true}}}}, {"max_new", 6}}}}};
  std::ofstream(f.dir / "relay.json") << one.dump(2);
  const auto relay = build_relay(load_relay_spec(f.dir / "relay.json"));
  // the storage reached the model: the q8_0 instance, and its f16 fallbacks listed (ffn 48)
  REQUIRE(dynamic_cast<baton::detail::BackendRuntimeRelay<host, q8_0, 8>*>(relay.get()) != nullptr);
  REQUIRE(relay->warnings().size() == 1);
  CHECK(relay->warnings()[0].find("q8_0 keeps 2 matrices in f16") != std::string::npos);
  relay->prewarm();
  const RelayResult r = relay->run(kRequestIds());
  // the same greedy run by hand on the q8_0 model
  const auto model = load_model<host, q8_0>(f.dir / "model");
  const auto slice = LoraSlice<8, host>::none(model.config());
  KvBuffer<layout::HeadMajor<f32, 8>, host> cache(model.config(), {0, 16, 1});
  cache.reset_prefix();
  cache.freeze_prefix();
  Workspace<host> ws;
  std::vector<std::int32_t> in = kRequestIds(), want;
  int pos = 0;
  for (int s = 0; s < 6; ++s) {
    const auto l = forward(model, ws, slice, cache, KvTarget::in_slot(0), pos,
                           std::span<const std::int32_t>(in), Logits::last);
    pos += static_cast<int>(in.size());
    in = {kernels::argmax(l.data(), static_cast<int>(l.size()))};
    want.push_back(in[0]);
  }
  CHECK(r.output(0) == want);
}

TEST_CASE("\"shared\": a relay of activated adapters from JSON, run alone and batched") {
  RelayFixture f("json_shared");
  const std::vector<std::vector<int>> inv = {{50, 51}, {52, 53, 54}};
  std::vector<TinyAdapter> act;
  for (int k = 0; k < 2; ++k) {
    TinyAdapterSpec s{
        .r = 4, .alpha = 8, .targets = {"q_proj", "v_proj", "down_proj"}, .seed = 70u + k};
    s.invocation = inv[k];
    act.push_back(make_tiny_adapter(f.tm.cfg, s));
    write_tiny_adapter(act.back(), f.dir / ("act" + std::to_string(k)));
  }
  json j = {{"model", "model"},
            {"shared",
             {{"prefix", {3, 14, 15}},
              {"input", {{{"ids", {60}}}, {{"request", true}}, {{"ids", {61}}}}},
              {"turn_end", {62}}}},
            {"stages",
             {{{"name", "a"}, {"adapter", "act0"}, {"max_new", 5}},  // the adapter's invocation
              {{"name", "b"}, {"adapter", "act1"}, {"invocation", {52, 53, 54}}, {"max_new", 6}}}},
            {"max_request_tokens", 16}};
  std::ofstream(f.dir / "relay.json") << j.dump(2);
  const auto relay = build_relay(load_relay_spec(f.dir / "relay.json"));
  relay->prewarm();
  const auto req = kRequestIds();
  const RelayResult r = relay->run(req);
  // The naive model on each stage's whole input: the shared sequence so far + the invocation.
  const auto naive = [&](int k, std::vector<int> whole, int n) {
    const auto out = NaiveModel(f.tm, &act[static_cast<std::size_t>(k)]).greedy(whole, n);
    return std::vector<std::int32_t>(out.begin(), out.end());
  };
  std::vector<int> seq = {3, 14, 15, 60};
  seq.insert(seq.end(), req.begin(), req.end());
  seq.push_back(61);
  auto whole = seq;
  whole.insert(whole.end(), inv[0].begin(), inv[0].end());
  const auto a = naive(0, whole, 5);
  CHECK(r.output(0) == a);
  whole.insert(whole.end(), a.begin(), a.end());
  whole.push_back(62);
  whole.insert(whole.end(), inv[1].begin(), inv[1].end());
  CHECK(r.output(1) == naive(1, whole, 6));
  CHECK(r.shared_tokens == 7 + 2 + 5 + 1);
  // The batch scheduler over the same relay: the same ids.
  auto batched = relay->batched({.max_rows = 4, .max_tokens = 4});
  const Ticket t = batched->submit(req);
  batched->run();
  const auto b = batched->take(t);
  REQUIRE(b.has_value());
  CHECK(b->output(0) == r.output(0));
  CHECK(b->output(1) == r.output(1));

  SUBCASE("errors name the file and the field") {
    json e = j;
    e["stages"][0]["adapter"] = "adapter0";  // a plain LoRA
    std::ofstream(f.dir / "plain.json") << e.dump(2);
    CHECK_THROWS_WITH_AS(build_relay(load_relay_spec(f.dir / "plain.json")),
                         doctest::Contains("stage 'a' reads the shared sequence (no 'input'), so "
                                           "its adapter must be an activated LoRA"),
                         config_error);
    e = j;
    e["shared"]["input"] = {{{"out", "a"}}};
    CHECK_THROWS_WITH_AS(
        parse(e), doctest::Contains("field 'shared'.input[0]: the shared sequence"), config_error);
    e = j;
    e["shared"]["input"] = {{{"ids", {1}}}};
    CHECK_THROWS_WITH_AS(parse(e), doctest::Contains("holds no {\"request\": true}"), config_error);
    e = j;
    e["stages"][1]["input"] = {{{"request", true}}};
    CHECK_THROWS_WITH_AS(parse(e), doctest::Contains("stages[1] ('b'): 'invocation' belongs to"),
                         config_error);
    e = j;
    e["stages"][0]["prefix"] = {1};
    CHECK_THROWS_WITH_AS(parse(e), doctest::Contains("drop 'prefix', 'system' and 'examples'"),
                         config_error);
    e = j;
    e["stages"][1]["invocation"] = json::array();
    CHECK_THROWS_AS(parse(e), config_error);
  }
}

TEST_CASE("a stage's adapter replaced at run time: the prefix is recomputed through it") {
  // What a server's adapter slots do (tools/serve/adapter_table.hpp): load_adapter reads and
  // checks an adapter without touching a stage; swap_adapter puts it into a stage, pre-warms it
  // again and hands back the one it held. With a prefix, a stale pre-warm (the old adapter's K/V)
  // would change every answer: each run must equal the no-cache reference of the adapter in the
  // stage now, also after swapping back.
  RelayFixture f("swap");
  const json j = {{"model", "model"},
                  {"stages",
                   {{{"name", "only"},
                     {"adapter", "adapter0"},
                     {"prefix", {3, 14, 15}},
                     {"input", {{{"request", true}}}},
                     {"max_new", 6}}}}};
  std::ofstream(f.dir / "swap.json") << j.dump(2);
  const auto relay = build_relay(load_relay_spec(f.dir / "swap.json"));
  relay->prewarm();
  const auto req = kRequestIds();
  const auto with = [&](int a) { return f.reference(a, {3, 14, 15}, req, 6); };
  REQUIRE(with(0) != with(1));  // else a stale prefix could go unseen
  CHECK(relay->run(req).output(0) == with(0));
  std::unique_ptr<RelayAdapter> second = relay->load_adapter(f.adapter_dir(1));
  CHECK(second->source() == f.adapter_dir(1).string());
  CHECK(relay->run(req).output(0) == with(0));  // loading alone changes nothing
  std::unique_ptr<RelayAdapter> first = relay->swap_adapter(0, std::move(second));
  CHECK(first->source() == f.adapter_dir(0).string());
  CHECK(relay->run(req).output(0) == with(1));
  std::unique_ptr<RelayAdapter> back = relay->swap_adapter(0, std::move(first));
  CHECK(relay->run(req).output(0) == with(0));
  (void)relay->swap_adapter(0, nullptr);  // none: the base model
  CHECK(relay->run(req).output(0) == f.reference(-1, {3, 14, 15}, req, 6));
  EXPECT_ERROR(error, relay->load_adapter(f.dir / "missing"), "missing");
  EXPECT_ERROR(usage_error, relay->swap_adapter(1, std::move(back)), "stage 1");

  // A stage naming a served adapter ("lora") is the server's to resolve.
  json k = j;
  k["stages"][0].erase("adapter");
  k["stages"][0]["lora"] = "sql";
  const RelaySpec named = parse_relay_spec(k, f.dir / "named.json");
  CHECK(named.stages[0].served_adapter == "sql");
  EXPECT_ERROR(config_error, build_relay(named), "names the served adapter 'sql'");
  k["stages"][0]["adapter"] = "adapter0";
  EXPECT_ERROR(config_error, parse_relay_spec(k, f.dir / "named.json"),
               "give 'adapter' (a folder) or 'lora'");
}
