// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The fuzz targets as one program: every target's file is included here, so the headers they
// share (nlohmann/json, the tokenizer, the grammar compiler) are parsed and instantiated once.
// The program runs the target it is started as: the build links fuzz_<name> to it, and
// scripts/fuzz.sh and a finding's reproduction (`build/fuzz/fuzz_<name> crash-...`) use those
// names. Started under another name, it lists the targets and stops.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_chat_template.cpp"
#include "fuzz_grammar_regex.cpp"
#include "fuzz_hf_config.cpp"
#include "fuzz_http.cpp"
#include "fuzz_json_schema.cpp"
#include "fuzz_peft_config.cpp"
#include "fuzz_relay.cpp"
#include "fuzz_safetensors.cpp"
#include "fuzz_tokenizer.cpp"

namespace {

struct Target {
  std::string_view name;
  int (*run)(const std::uint8_t*, std::size_t);
};

constexpr Target kTargets[] = {
    {"safetensors", baton_fuzz_safetensors},
    {"hf_config", baton_fuzz_hf_config},
    {"peft_config", baton_fuzz_peft_config},
    {"tokenizer", baton_fuzz_tokenizer},
    {"relay", baton_fuzz_relay},
    {"grammar_regex", baton_fuzz_grammar_regex},
    {"json_schema", baton_fuzz_json_schema},
    {"http", baton_fuzz_http},
    {"chat_template", baton_fuzz_chat_template},
};

const Target* chosen = nullptr;

}  // namespace

// libFuzzer calls this once, before any input, with the program's own arguments.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  std::string_view self = *argc > 0 ? (*argv)[0] : "";
  if (const auto slash = self.rfind('/'); slash != std::string_view::npos)
    self.remove_prefix(slash + 1);
  for (const Target& t : kTargets)
    if (self.size() == t.name.size() + 5 && self.starts_with("fuzz_") && self.ends_with(t.name))
      chosen = &t;
  if (chosen == nullptr) {
    std::fprintf(stderr, "baton_fuzz: started as '%.*s'; run it as fuzz_<target>, one of:",
                 static_cast<int>(self.size()), self.data());
    for (const Target& t : kTargets)
      std::fprintf(stderr, " %.*s", static_cast<int>(t.name.size()), t.name.data());
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return chosen->run(data, size);
}
