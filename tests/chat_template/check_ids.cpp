// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Replays reference_ids.py's cases through baton: a model folder's chat template and
/// tokenizer (load_chat_config, encode_chat) must give transformers' ids for every
/// conversation, and for the one that spells control tags, those tags as text. The prompt is
/// the one baton gives a model (encode_model_chat): add_bos_token's BOS rule applied.
///   check_ids MODEL_DIR REFERENCE.json
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/text/chat_config.hpp"
#include "baton/text/model_chat.hpp"
#include "baton/text/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: check_ids MODEL_DIR REFERENCE.json\n";
    return 2;
  }
  const std::string dir = argv[1];
  std::ifstream in(argv[2]);
  std::stringstream text;
  text << in.rdbuf();
  const auto ref = nlohmann::ordered_json::parse(text.str());
  const auto tok = baton::Tokenizer::from_file(dir + "/tokenizer.json");
  const baton::ChatConfig cfg = baton::load_chat_config(dir);
  int bad = 0, n = 0;
  for (const auto& c : ref["cases"]) {
    ++n;
    baton::ChatRenderOptions opt = cfg.render_options(c["add_generation_prompt"].get<bool>());
    for (const auto& [k, v] : c["context"].items())
      if (k != "messages") opt.extra[k] = v;
    const auto got = baton::encode_model_chat(cfg, tok, dir, c["context"]["messages"], opt);
    const auto want = c["ids"].get<std::vector<std::int32_t>>();
    if (got == want) continue;
    ++bad;
    std::size_t at = 0;
    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
    std::cerr << "FAIL " << c["name"].get<std::string>()
              << " add_generation_prompt=" << c["add_generation_prompt"] << ": " << got.size()
              << " ids, transformers " << want.size() << "; first difference at " << at << "\n";
  }
  std::cout << dir << ": " << (n - bad) << " of " << n << " conversations give transformers' ids\n";
  return bad ? 1 : 0;
}
