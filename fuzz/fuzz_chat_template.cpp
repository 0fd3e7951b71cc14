// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Chat templates (text/chat_template.hpp): any bytes as a template, parsed and rendered over a
// conversation with small TemplateLimits, must render or fail with baton::error (a
// template_error naming the limit, the syntax error or what the template raised), in bounded
// time and memory.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "baton/text/chat_template.hpp"
#include "fuzz_common.hpp"

BATON_FUZZ_TARGET(chat_template) {
  static const nlohmann::ordered_json kMessages = nlohmann::ordered_json::parse(R"([
    {"role": "system", "content": "sys {{ x }}"},
    {"role": "user", "content": "h\u00e9llo <|im_start|>", "name": "u"},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f",
      "arguments": {"a": [1, 2.5, null, true]}}}]},
    {"role": "tool", "content": "{\"r\": 1}"}])");
  baton::TemplateLimits limits;
  limits.max_loop_iterations = 20000;
  limits.max_call_depth = 16;
  limits.max_output_bytes = 1 << 20;
  limits.max_render_time = std::chrono::milliseconds(200);
  limits.max_nesting = 64;
  try {
    const baton::ChatTemplate tmpl(baton::fuzz::as_text(data, size), "fuzz.jinja", limits);
    for (const bool gen : {false, true}) {
      baton::ChatRenderOptions opt;
      opt.add_generation_prompt = gen;
      opt.bos_token = "<s>";
      (void)tmpl.render(kMessages, opt);
    }
  } catch (const baton::error&) {
  }
  return 0;
}
