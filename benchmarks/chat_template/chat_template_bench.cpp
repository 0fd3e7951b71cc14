// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// Rendering a 4-turn conversation (system, user, assistant, user; add_generation_prompt)
// through a chat template, the cost every chat request pays before its first token. The
// template is a .jinja file (llama.cpp's meta-llama-Llama-3.1-8B-Instruct.jinja, which
// tests/chat_template/jinja_reference.sh caches) or a tokenizer_config.json holding one.
//   chat_template_bench TEMPLATE [ITERATIONS]
// Prints one JSON object: the template, the rendered bytes, median / p90 / min microseconds per
// render over ITERATIONS renders (default 20000) after a warm-up, and the 50 µs target.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "baton/io/json_util.hpp"
#include "baton/text/chat_template.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: chat_template_bench TEMPLATE.jinja|tokenizer_config.json [ITERATIONS]\n";
    return 2;
  }
  const std::filesystem::path path = argv[1];
  const int iterations = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20000;
  try {
    std::string source = baton::io::read_text_file(path);
    if (path.extension() == ".json") source = nlohmann::json::parse(source)["chat_template"];
    const baton::ChatTemplate tmpl(source, path.string());
    const auto messages = nlohmann::ordered_json::parse(R"([
      {"role": "system", "content": "You are a helpful assistant. Answer briefly and cite the facts you use."},
      {"role": "user", "content": "What is the capital of France, and roughly how many people live there?"},
      {"role": "assistant", "content": "Paris is the capital of France; about 2.1 million people live in the city itself."},
      {"role": "user", "content": "And the metropolitan area? Give one number."}])");
    baton::ChatRenderOptions opt;
    opt.add_generation_prompt = true;
    opt.bos_token = "<|begin_of_text|>";
    opt.eos_token = "<|eot_id|>";
    // What a server holds per request: the context built once, rendered once.
    const nlohmann::ordered_json ctx = baton::ChatTemplate::context_for(messages, opt);
    std::size_t bytes = 0;
    for (int i = 0; i < 200; ++i) bytes = tmpl.render(ctx).size();  // warm-up
    std::vector<double> us(static_cast<std::size_t>(iterations));
    for (double& t : us) {
      const auto t0 = std::chrono::steady_clock::now();
      bytes = tmpl.render(ctx).size();
      t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    std::sort(us.begin(), us.end());
    const double median = us[us.size() / 2];
    nlohmann::ordered_json out = {{"benchmark", "chat_template_render"},
                                  {"template", path.filename().string()},
                                  {"turns", 4},
                                  {"rendered_bytes", bytes},
                                  {"iterations", iterations},
                                  {"median_us", median},
                                  {"p90_us", us[us.size() * 9 / 10]},
                                  {"min_us", us.front()},
                                  {"target_median_us", 50},
                                  {"meets_target", median <= 50.0}};
    std::cout << out.dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "chat_template_bench: " << e.what() << "\n";
    return 1;
  }
}
