// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton <subcommand> ...`: dispatches to the subcommands declared in commands.hpp.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "baton/core/error.hpp"
#include "commands.hpp"

namespace main_program {

struct Command {
  std::string_view name;
  int (*run)(int, char**);
  std::string_view summary;
};

constexpr Command kCommands[] = {
    {"chat-template", cmd_chat_template, "render a conversation through a chat template"},
    {"generate", cmd_generate, "greedy generation from token ids (model + optional adapter)"},
    {"quantize", cmd_quantize, "a model's matrices as 8-/4-bit blocks (q8_0, q4_0), once"},
    {"relay", cmd_relay, "run a relay of LoRA stages described by a JSON file"},
    {"serve", cmd_serve, "serve relays over HTTP with the OpenAI API (docs/serve.md)"},
    {"tokenize", cmd_tokenize, "text to token ids with a tokenizer.json"},
    {"detokenize", cmd_detokenize, "token ids to text with a tokenizer.json"},
};

void usage(std::ostream& out) {
  out << "usage: baton <subcommand> [options]\n"
         "       baton <subcommand> --help\n\n"
         "subcommands:\n";
  for (const Command& c : kCommands) {
    out << "  " << c.name << std::string(15 - std::min<std::size_t>(c.name.size(), 14), ' ')
        << c.summary << "\n";
  }
}

}  // namespace main_program

int main(int argc, char** argv) {
  using namespace main_program;
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string_view sub = argv[1];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    usage(std::cout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (c.name != sub) continue;
    try {
      // The callee sees its own name as argv[0], like a program of its own.
      return c.run(argc - 1, argv + 1);
    } catch (const baton::error& e) {
      std::cerr << "baton " << sub << ": " << e.what() << "\n";
      return 1;
    } catch (const std::exception& e) {
      // Not a baton::error: out of memory, or a bug. Still a clean message, not an abort.
      std::cerr << "baton " << sub << ": unexpected error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "baton: unknown subcommand '" << baton::detail::excerpt(sub) << "'\n\n";
  usage(std::cerr);
  return 2;
}
