// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Hostile counts (issue #22, item 3): every count a relay file or a caller gives is bounded,
// and a value past its bound ends in a baton::error naming the field, the value and the limit
// (and where the limit is raised) before anything is sized by it. Also: thread creation that
// the system refuses, an empty gate needle, a tokenizer larger than the model, and model paths
// compared by their resolved names.
//
// Mutation checks (2026-12-02), applied together to a copy of include/ (each caught by its own
// case), this file compiled alone against it and run:
//   ThreadPool: the catch around thread creation rethrows -> the forked child dies of SIGABRT
//   parse_relay_spec: the max_cycles bound off             -> "max_cycles": 2 checks fail
//   parse_relay_spec: the empty-needle check off           -> "empty gate needle": 3 fail
//   detail::excerpt returns its whole input                -> "relay strings": 6 size checks
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/backend/host_context.hpp"
#include "baton/backend/thread_pool.hpp"
#include "baton/io/json_util.hpp"
#include "baton/lora/base_model_check.hpp"
#include "baton/relay/config.hpp"
#include "support/expect_error.hpp"
#include "support/sanitized.hpp"

using namespace baton;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// The smallest valid relay file: one stage reading the request.
json one_stage() {
  return {
      {"model", "m"},
      {"stages", json::array({{{"name", "a"}, {"input", {{{"request", true}}}}, {"max_new", 1}}})}};
}

RelaySpec parse(const json& j, const io::ReadLimits& limits = {}) {
  return parse_relay_spec(j, "cfg/relay.json", limits);
}

/// A message is short whatever the input's size (docs/security.md: a cut excerpt at most).
void check_short(const std::string& msg) {
  CHECK_MESSAGE(msg.size() < 400, "message of " << msg.size() << " bytes");
}

}  // namespace

TEST_CASE("relay counts: stages, cycles and lists past their limits name field, value, limit") {
  SUBCASE("40,000 stages (the issue's 3 MB file) are refused before any is read") {
    json j = one_stage();
    for (int i = 1; i < 40000; ++i) j["stages"].push_back(j["stages"][0]);
    check_short(ERROR_MESSAGE(config_error, parse(j),
                              "cfg/relay.json: field 'stages' has 40000 stages", "limit of 64",
                              "io::ReadLimits::relay_stages"));
    j["stages"] = json::array();
    for (int i = 0; i < 65; ++i) {
      json s = one_stage()["stages"][0];
      std::string name = "s";
      name += std::to_string(i);  // not "s" + ...: GCC 12's -Wrestrict false positive
      s["name"] = name;
      j["stages"].push_back(s);
    }
    EXPECT_ERROR(config_error, parse(j), "has 65 stages", "limit of 64");
    j["stages"].erase(64);
    CHECK(parse(j).stages.size() == 64);  // the limit itself is allowed
    CHECK(parse(j, {.relay_stages = 100}).stages.size() == 64);
  }
  SUBCASE("max_cycles: a billion, one past the limit, and a raised limit") {
    json j = one_stage();
    j["max_cycles"] = 1000000000;
    check_short(ERROR_MESSAGE(config_error, parse(j), "field 'max_cycles' = 1000000000",
                              "limit of 1000", "io::ReadLimits::relay_cycles"));
    j["max_cycles"] = 1001;
    EXPECT_ERROR(config_error, parse(j), "'max_cycles' = 1001", "limit of 1000");
    j["max_cycles"] = 1000;
    CHECK(parse(j).max_cycles == 1000);
    j["max_cycles"] = 5000;
    CHECK(parse(j, {.relay_cycles = 5000}).max_cycles == 5000);
  }
  SUBCASE("id lists: prefix, allow_tokens, deny_tokens") {
    const io::ReadLimits small{.relay_ids = 3};
    json j = one_stage();
    j["stages"][0]["prefix"] = {1, 2, 3, 4};
    check_short(ERROR_MESSAGE(config_error, parse(j, small), "stages[0] ('a').prefix has 4 ids",
                              "limit of 3", "io::ReadLimits::relay_ids"));
    j["stages"][0].erase("prefix");
    j["stages"][0]["interceptors"] = {{{"allow_tokens", {1, 2, 3, 4}}}};
    EXPECT_ERROR(config_error, parse(j, small), "interceptors[0].allow_tokens has 4 tokens",
                 "limit of 3");
    j["stages"][0]["interceptors"] = {{{"deny_tokens", json::array()}}};
    for (int i = 0; i < (1 << 18) + 1; ++i)
      j["stages"][0]["interceptors"][0]["deny_tokens"].push_back(i);
    EXPECT_ERROR(config_error, parse(j), "deny_tokens has 262145 tokens", "limit of 262144");
  }
  SUBCASE("stage lists: stop ids, stop_text, stop_sequences, input segments") {
    const io::ReadLimits small{.relay_entries = 2};
    json j = one_stage();
    j["stages"][0]["stop"] = {1, 2, 3};
    EXPECT_ERROR(config_error, parse(j, small), ".stop has 3 ids", "limit of 2",
                 "io::ReadLimits::relay_entries");
    j["stages"][0]["stop"] = {1};
    j["stages"][0]["stop_text"] = {"x", "y"};
    EXPECT_ERROR(config_error, parse(j, small), ".stop and .stop_text has 3 stops", "limit of 2");
    j["stages"][0].erase("stop");
    j["stages"][0].erase("stop_text");
    j["stages"][0]["interceptors"] = {{{"stop_sequences", json::array()}}};
    for (int i = 0; i < 1025; ++i)
      j["stages"][0]["interceptors"][0]["stop_sequences"].push_back("s");
    EXPECT_ERROR(config_error, parse(j), "stop_sequences has 1025 stop sequences", "limit of 1024");
    j["stages"][0].erase("interceptors");
    j["stages"][0]["input"] = json::array();
    for (int i = 0; i < 3; ++i) j["stages"][0]["input"].push_back({{"request", true}});
    EXPECT_ERROR(config_error, parse(j, small), ".input has 3 segments", "limit of 2");
  }
}

TEST_CASE("relay strings: names, texts, regexes and paths past their limits") {
  SUBCASE("a stage name of 300 bytes") {
    json j = one_stage();
    j["stages"][0]["name"] = std::string(300, 'n');
    check_short(ERROR_MESSAGE(config_error, parse(j), "stages[0].name", "is 300 bytes",
                              "limit of 256", "io::ReadLimits::relay_name_bytes"));
  }
  SUBCASE("a 1 MB text segment, system prompt, allow_tokens string, regex") {
    const std::string big(1 << 20, 't');
    json j = one_stage();
    j["stages"][0]["input"] = {{{"text", big}}};
    check_short(ERROR_MESSAGE(config_error, parse(j), "input[0].text", "is 1048576 bytes",
                              "limit of 262144", "io::ReadLimits::relay_text_bytes"));
    j = one_stage();
    j["stages"][0]["system"] = big;
    check_short(ERROR_MESSAGE(config_error, parse(j), ".system", "is 1048576 bytes"));
    j = one_stage();
    j["stages"][0]["interceptors"] = {{{"allow_tokens", {big}}}};
    check_short(ERROR_MESSAGE(config_error, parse(j), "allow_tokens[0]", "is 1048576 bytes"));
    j = one_stage();
    j["stages"][0]["grammar"] = {{"regex", big}};
    check_short(ERROR_MESSAGE(config_error, parse(j), ".grammar.regex", "is 1048576 bytes"));
  }
  SUBCASE("a path of 5000 bytes") {
    json j = one_stage();
    j["model"] = std::string(5000, 'p');
    check_short(
        ERROR_MESSAGE(config_error, parse(j), "field 'model'", "is 5000 bytes", "limit of 4096"));
    j = one_stage();
    j["stages"][0]["adapter"] = std::string(5000, 'p');
    check_short(ERROR_MESSAGE(config_error, parse(j), "('a').adapter", "is 5000 bytes"));
  }
}

TEST_CASE("an empty gate needle is refused at load, naming the field") {
  json j = one_stage();
  j["gate"] = {{"contains", json::array()}};
  EXPECT_ERROR(config_error, parse(j), "cfg/relay.json: gate.contains is empty");
  j["gate"] = {{"contains", ""}};
  EXPECT_ERROR(config_error, parse(j), "gate.contains is empty");
  j["gate"] = {{"starts_with", json::array()}};
  EXPECT_ERROR(config_error, parse(j), "gate.starts_with is empty");
  j["gate"] = {{"starts_with", {7}}};
  CHECK(parse(j).gate.needle.ids == std::vector<std::int32_t>{7});
}

TEST_CASE("thread counts: bounded, and a refused thread is an error, not an abort") {
  SUBCASE("the bound: the pool, the relay file's host.threads") {
    const int max = ThreadPool::max_threads();
    CHECK(max >= ThreadPool::kMaxThreads);
    EXPECT_ERROR(usage_error, ThreadPool(100000), "threads = 100000", "outside [1, ");
    EXPECT_ERROR(usage_error, ThreadPool(max + 1), "outside [1, " + std::to_string(max) + "]");
    EXPECT_ERROR(usage_error, ThreadPool(0), "threads = 0");
    EXPECT_ERROR(usage_error, HostContext(HostContextOptions{.threads = 100000}),
                 "threads = 100000");
    json j = one_stage();
    j["host"] = {{"threads", 1024}};
    if (max < 1024)
      EXPECT_ERROR(config_error, parse(j), "field 'host'", "'threads' = 1024",
                   "ThreadPool::max_threads()");
    j["host"] = {{"threads", 100000}};
    EXPECT_ERROR(config_error, parse(j), "'threads' = 100000");
  }
  // Not under ASan (test::kSanitized: g++ and clang say so differently): it reserves terabytes
  // of shadow and maps a fake stack per thread, which the limit below refuses.
  if (!test::kSanitized)
    SUBCASE("threads the system refuses: the started ones are joined, the error names the count") {
      // In a child whose address space is limited to what it uses now plus a little, so that
      // thread stacks (8 MiB each) cannot be mapped.
      std::fflush(nullptr);
      const pid_t child = fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        long pages = 0;
        if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
          if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
          std::fclose(f);
        }
        const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
        const rlimit lim{now + (48u << 20), now + (48u << 20)};
        if (pages == 0 || setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
        try {
          ThreadPool pool(200);
          _exit(4);  // every thread started: the limit did not bite
        } catch (const io_error& e) {
          const std::string m = e.what();
          _exit(m.find("refused thread") != std::string::npos &&
                        m.find("of 200") != std::string::npos
                    ? 0
                    : 5);
        } catch (...) {
          _exit(6);
        }
      }
      int status = 0;
      REQUIRE(waitpid(child, &status, 0) == child);
      CHECK_MESSAGE(WIFEXITED(status), "the child died of signal " << WTERMSIG(status));
      if (WIFEXITED(status)) CHECK(WEXITSTATUS(status) == 0);
    }
}

TEST_CASE("a tokenizer with more ids than the model's vocab_size is refused, naming both") {
  EXPECT_ERROR(config_error, check_tokenizer_fits(65, 64, "tok.json", "qwen-c"),
               "tokenizer tok.json has 65 ids", "qwen-c's vocab_size = 64");
  EXPECT_ERROR(config_error, check_tokenizer_fits(151936, 1000, "t", "m"), "151936 ids",
               "vocab_size = 1000");
  EXPECT_ERROR(config_error, check_tokenizer_fits(1, 0, "t", "m"), "vocab_size = 0");
  // A model with more rows than the tokenizer has ids (Qwen's padding rows) is fine.
  CHECK_NOTHROW(check_tokenizer_fits(64, 64, "t", "m"));
  CHECK_NOTHROW(check_tokenizer_fits(151665, 151936, "t", "m"));
}

TEST_CASE("model paths are compared by their resolved folder name") {
  // "model": "." in models/word-problems/relay.json: the folder's own name, not ".".
  json j = one_stage();
  j["model"] = ".";
  const RelaySpec spec = parse_relay_spec(j, "models/word-problems/relay.json");
  CHECK(spec.model == fs::path("models/word-problems"));
  CHECK(model_folder_name(spec.model.string()) == "word-problems");
  CHECK(model_folder_name("models/word-problems/.") == "word-problems");
  CHECK(model_folder_name("models/word-problems/") == "word-problems");
  CHECK(model_folder_name("models/x/../word-problems") == "word-problems");
  CHECK(model_folder_name(".") == model_basename(fs::current_path().string()));
  j["tokenizer"] = "./sub/../tokenizer.json";
  CHECK(parse_relay_spec(j, "d/relay.json").tokenizer == fs::path("d/tokenizer.json"));
}
