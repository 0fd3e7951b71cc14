// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton chat-template`: renders a conversation through a chat template and prints the
/// text exactly, nothing added, so it can be compared byte for byte with transformers'.
///
///   baton chat-template (--model DIR | --template FILE) --messages FILE.json
///                       [--add-generation-prompt] [--bos S] [--eos S]
///
/// --messages holds a JSON array of messages, or an object whose keys are the template's
/// variables (its "messages", and e.g. "tools" or "enable_thinking"). With --model, the
/// folder's special tokens are given to the template as transformers gives them; --bos and
/// --eos set bos_token and eos_token (over the folder's). Exit status: 0 rendered, 1 the
/// template failed or raised (its message on stderr), 2 a bad command line.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "args.hpp"
#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/text/chat_config.hpp"
#include "baton/text/chat_template.hpp"
#include "commands.hpp"

namespace chat_template_command {

constexpr std::string_view kUsage =
    "usage: baton chat-template (--model DIR | --template FILE) --messages FILE.json\n"
    "                           [--add-generation-prompt] [--bos S] [--eos S]\n"
    "  --model DIR              a model folder: chat_template.jinja or tokenizer_config.json's\n"
    "                           chat_template, and its special tokens\n"
    "  --template FILE          a Jinja chat template file\n"
    "  --messages FILE          a JSON array of {\"role\", \"content\"} messages, or an object of\n"
    "                           the template's variables (\"messages\", \"tools\", ...)\n"
    "  --add-generation-prompt  end with the assistant's header (the model answers next)\n"
    "  --bos S, --eos S         the bos_token and eos_token the template is given\n"
    "Prints the rendered text exactly (no newline added).\n";

struct Options {
  std::string model, template_file, messages;
  bool add_generation_prompt = false;
  std::optional<std::string> bos, eos;
};

Options parse(int argc, char** argv) {
  Options o;
  baton::cli::SeenOptions seen;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw baton::cli::ArgError{std::string(a) + " needs a value"};
      return std::string(argv[++i]);
    };
    if (a == "--add-generation-prompt") {
      seen.once(a);
      o.add_generation_prompt = true;
    } else if (a == "--model") {
      seen.once(a);
      o.model = baton::cli::non_empty(a, value());
    } else if (a == "--template") {
      seen.once(a);
      o.template_file = baton::cli::non_empty(a, value());
    } else if (a == "--messages") {
      seen.once(a);
      o.messages = baton::cli::non_empty(a, value());
    } else if (a == "--bos") {
      seen.once(a);
      o.bos = value();
    } else if (a == "--eos") {
      seen.once(a);
      o.eos = value();
    } else {
      throw baton::cli::ArgError{"unknown option '" + baton::detail::excerpt(a) + "'"};
    }
  }
  if (o.model.empty() == o.template_file.empty())
    throw baton::cli::ArgError{"give one of --model DIR and --template FILE"};
  if (o.messages.empty()) throw baton::cli::ArgError{"--messages FILE is required"};
  return o;
}

}  // namespace chat_template_command

int cmd_chat_template(int argc, char** argv) {
  using namespace chat_template_command;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const baton::cli::ArgError& e) {
    std::cerr << argv[0] << ": " << e.message << "\n" << kUsage;
    return 2;
  }
  std::optional<baton::ChatTemplate> tmpl;
  baton::ChatRenderOptions opt;
  if (!o.model.empty()) {
    baton::ChatConfig cfg = baton::load_chat_config(o.model);
    tmpl.emplace(cfg.require_template(o.model));
    opt = cfg.render_options(false);
  } else {
    tmpl.emplace(baton::io::read_text_file(o.template_file), o.template_file);
  }
  opt.add_generation_prompt = o.add_generation_prompt;
  if (o.bos) opt.extra["bos_token"] = *o.bos;
  if (o.eos) opt.extra["eos_token"] = *o.eos;
  const auto doc = baton::io::parse_json_strict<nlohmann::ordered_json>(
      baton::io::read_text_file(o.messages), o.messages);
  nlohmann::ordered_json ctx;
  if (doc.is_array()) {
    ctx = baton::ChatTemplate::context_for(doc, opt);
  } else {
    BATON_CHECK(doc.is_object() && doc.contains("messages"), baton::format_error, o.messages,
                ": neither an array of messages nor an object with \"messages\"");
    ctx = baton::ChatTemplate::context_for(doc["messages"], opt);
    for (const auto& [k, v] : doc.items()) ctx[k] = v;
  }
  const std::string text = tmpl->render(ctx);
  BATON_CHECK(
      std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0,
      baton::io_error, "writing stdout failed");
  return 0;
}
