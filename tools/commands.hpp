// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief The subcommands of the `baton` program. Each takes (argc, argv) with argv[0] the
///        subcommand's name and returns the process exit status.
///
/// Exit status convention: 0 success, 1 a baton::error (bad model, adapter, ids, ...; main
/// prints it), 2 a malformed command line (the subcommand prints its usage).
#pragma once

/// `baton chat-template`: a conversation rendered through a chat template
/// (tools/cmd_chat_template.cpp).
int cmd_chat_template(int argc, char** argv);
/// `baton generate`: greedy generation from token ids (tools/cmd_generate.cpp).
int cmd_generate(int argc, char** argv);
/// `baton quantize`: a checkpoint's matrices as Q8_0/Q4_0 blocks (tools/cmd_quantize.cpp).
int cmd_quantize(int argc, char** argv);
/// `baton relay`: run a relay described by a JSON file (tools/cmd_relay.cpp).
int cmd_relay(int argc, char** argv);
/// `baton serve`: relays over HTTP with the OpenAI API (tools/cmd_serve.cpp).
int cmd_serve(int argc, char** argv);
/// `baton tokenize`: text to token ids (tools/cmd_tokenize.cpp).
int cmd_tokenize(int argc, char** argv);
/// `baton detokenize`: token ids to text (tools/cmd_tokenize.cpp).
int cmd_detokenize(int argc, char** argv);
