// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton chat-template` alone (tools/cmd_chat_template.cpp, the same code), for the
///        jinja2 comparison's thousand-odd runs: the `baton` program of a CUDA build maps the
///        CUDA libraries at every start (about 0.1 s; this program, 3 ms). main() handles errors
///        as tools/main.cpp does; chat_template_cli tests the subcommand through `baton` itself.
///
///   chat_template_render chat-template [options]   (the same command line as `baton`'s)

#include <exception>
#include <iostream>
#include <string_view>

#include "baton/core/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "chat-template") {
    std::cerr << "usage: chat_template_render chat-template [options]\n";
    return 2;
  }
  try {
    return cmd_chat_template(argc - 1, argv + 1);  // argv[0]: the subcommand, as in `baton`
  } catch (const baton::error& e) {
    std::cerr << "baton chat-template: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "baton chat-template: unexpected error: " << e.what() << "\n";
    return 1;
  }
}
