// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton tokenize` and `baton detokenize`: text <-> token ids with a tokenizer.json.
///
///   baton tokenize --tokenizer FILE [--add-special] [--no-special] [--json] [--replace-invalid]
///                  [--backend host|cuda] < text
///   baton detokenize --tokenizer FILE [--skip-special] [--backend host|cuda] < ids
///
/// Both run on the host whatever the backend: `--backend` is accepted (so one command line
/// works for every subcommand), and `--backend cuda` is answered with a note on stderr.
/// tokenize reads all of stdin as bytes, exactly (no newline is stripped: "hi\n" ends with
/// the id of "\n"), and prints the ids space-separated on one line, or one JSON array with
/// --json. detokenize reads ids separated by whitespace and/or commas, or one JSON array, and
/// writes the bytes they stand for exactly, without adding a newline. Exit status: 0 success,
/// 1 a baton::error (bad file, invalid UTF-8, unknown id; main prints it), 2 a bad command line.
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend_choice.hpp"
#include "baton/core/error.hpp"
#include "baton/io/json_util.hpp"
#include "baton/text/tokenizer.hpp"
#include "commands.hpp"

namespace tokenize_command {

constexpr std::string_view kTokenizeUsage =
    "usage: baton tokenize --tokenizer FILE [--add-special] [--no-special] [--json]\n"
    "                      [--replace-invalid]\n"
    "                      [--backend host|cuda] < text\n"
    "  --tokenizer FILE   Hugging Face tokenizer.json (byte-level BPE: Qwen2/2.5/3, Llama-3)\n"
    "  --add-special      apply the post-processor template (Llama-3: <|begin_of_text|>)\n"
    "  --no-special       added tokens written in the text (<|im_end|>) are plain text, as\n"
    "                     untrusted input must be (default: matched, as Hugging Face does)\n"
    "  --json             print one JSON array instead of space-separated ids\n"
    "  --replace-invalid  replace invalid UTF-8 with U+FFFD (as a JavaScript caller of\n"
    "                     Hugging Face's binding gets) instead of failing with its offset\n"
    "  --backend B        accepted for every subcommand; tokenizing runs on the host\n"
    "stdin is read as bytes, exactly: a trailing newline is text and gets its id.\n";

constexpr std::string_view kDetokenizeUsage =
    "usage: baton detokenize --tokenizer FILE [--skip-special] [--backend host|cuda] < ids\n"
    "  --tokenizer FILE   Hugging Face tokenizer.json\n"
    "  --skip-special     drop special tokens (<|im_end|>, <|begin_of_text|>, ...)\n"
    "  --backend B        accepted for every subcommand; detokenizing runs on the host\n"
    "stdin: ids separated by whitespace and/or commas, or one JSON array. The text is written\n"
    "exactly as the ids spell it (no newline added).\n";

std::string read_stdin() {
  std::string data;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) data.append(buf, n);
  BATON_CHECK(!std::ferror(stdin), baton::io_error, "reading stdin failed");
  return data;
}

void write_stdout(std::string_view s) {
  BATON_CHECK(std::fwrite(s.data(), 1, s.size(), stdout) == s.size() && std::fflush(stdout) == 0,
              baton::io_error, "writing stdout failed");
}

// Parses the options shared by both commands; returns 2 (after printing usage) on a bad line,
// 0 after --help, -1 to go on. --backend is checked like every subcommand's (a value other
// than host/cuda, or cuda in a build without it, is a bad line); `--backend cuda` gets the
// note that tokenizers run on the host.
int parse(int argc, char** argv, std::string_view usage, std::string& tokenizer,
          std::vector<std::pair<std::string_view, bool*>> flags) {
  bool have_backend = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << usage;
      return 0;
    }
    if (a == "--backend") {
      try {
        if (have_backend) throw baton::cli::ArgError{"--backend is given twice"};
        if (i + 1 >= argc) throw baton::cli::ArgError{"--backend needs a value"};
        have_backend = true;
        if (baton::cli::parse_backend(argv[++i]) == baton::cli::BackendChoice::cuda)
          std::cerr << argv[0] << ": runs on the host whatever the backend (--backend cuda)\n";
      } catch (const baton::cli::ArgError& e) {
        std::cerr << argv[0] << ": " << e.message << "\n" << usage;
        return 2;
      }
      continue;
    }
    if (a == "--tokenizer") {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') {
        std::cerr << argv[0] << ": --tokenizer needs a file\n" << usage;
        return 2;
      }
      if (!tokenizer.empty()) {
        std::cerr << argv[0] << ": --tokenizer is given twice\n" << usage;
        return 2;
      }
      tokenizer = argv[++i];
      continue;
    }
    bool known = false;
    for (auto& [name, value] : flags) {
      if (a == name) {
        *value = true;
        known = true;
      }
    }
    if (!known) {
      std::cerr << argv[0] << ": unknown option '" << baton::detail::excerpt(a) << "'\n" << usage;
      return 2;
    }
  }
  if (tokenizer.empty()) {
    std::cerr << argv[0] << ": --tokenizer FILE is required\n" << usage;
    return 2;
  }
  return -1;
}

// Ids from "1 2,3\n4" or "[1, 2, 3]"; anything else names what it found and where.
std::vector<std::int32_t> parse_ids(const std::string& in) {
  std::vector<std::int32_t> ids;
  const std::size_t first = in.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && in[first] == '[') {
    // Strict and depth-limited like every JSON input: a deeply nested element must not
    // overflow the stack when the message below prints it.
    const nlohmann::json j = baton::io::parse_json_strict(in, "stdin");
    BATON_CHECK(j.is_array(), baton::format_error, "stdin: not a JSON array of ids");
    for (std::size_t k = 0; k < j.size(); ++k) {
      BATON_CHECK(j[k].is_number_integer() && j[k].get<std::int64_t>() >= 0 &&
                      j[k].get<std::int64_t>() <= INT32_MAX,
                  baton::format_error, "stdin: element ", k, " (", baton::io::detail::show(j[k]),
                  ") is not a token id");
      ids.push_back(static_cast<std::int32_t>(j[k].get<std::int64_t>()));
    }
    return ids;
  }
  std::size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',') {
      ++i;
      continue;
    }
    std::int32_t v = 0;
    const auto [end, ec] = std::from_chars(in.data() + i, in.data() + in.size(), v);
    const std::size_t stop = static_cast<std::size_t>(end - in.data());
    const bool separated =
        stop == in.size() || std::string_view(" \t\r\n,").find(in[stop]) != std::string_view::npos;
    if (ec != std::errc() || v < 0 || !separated) {
      const std::size_t tok_end = in.find_first_of(" \t\r\n,", i);
      BATON_FAIL(baton::format_error, "stdin: \"",
                 baton::detail::excerpt(std::string_view(in).substr(
                     i, tok_end == std::string::npos ? std::string::npos : tok_end - i)),
                 "\" at byte offset ", i, " is not a token id");
    }
    ids.push_back(v);
    i = stop;
  }
  return ids;
}

}  // namespace tokenize_command

int cmd_tokenize(int argc, char** argv) {
  using namespace tokenize_command;
  std::string file;
  bool add_special = false, no_special = false, json = false, replace = false;
  if (const int rc = parse(argc, argv, kTokenizeUsage, file,
                           {{"--add-special", &add_special},
                            {"--no-special", &no_special},
                            {"--json", &json},
                            {"--replace-invalid", &replace}});
      rc >= 0)
    return rc;
  const auto tok = baton::Tokenizer::from_file(file);
  std::string text = read_stdin();
  if (replace) text = baton::text::replace_invalid_utf8(text);
  std::vector<std::int32_t> ids;
  if (!no_special) {
    ids = tok.encode(text, add_special);
  } else {
    // The post-processor's ids (--add-special) are the program's own, not the text's.
    if (add_special) ids.assign(tok.prefix_special_ids().begin(), tok.prefix_special_ids().end());
    const auto plain = tok.encode_ordinary_text(text);
    ids.insert(ids.end(), plain.begin(), plain.end());
    if (add_special)
      ids.insert(ids.end(), tok.suffix_special_ids().begin(), tok.suffix_special_ids().end());
  }
  std::string out;
  out.reserve(ids.size() * 7 + 3);
  if (json) out.push_back('[');
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (k) out.append(json ? "," : " ");
    out.append(std::to_string(ids[k]));
  }
  if (json) out.push_back(']');
  out.push_back('\n');
  write_stdout(out);
  return 0;
}

int cmd_detokenize(int argc, char** argv) {
  using namespace tokenize_command;
  std::string file;
  bool skip_special = false;
  if (const int rc = parse(argc, argv, kDetokenizeUsage, file, {{"--skip-special", &skip_special}});
      rc >= 0)
    return rc;
  const auto tok = baton::Tokenizer::from_file(file);
  const auto ids = parse_ids(read_stdin());
  write_stdout(tok.decode(ids, skip_special));
  return 0;
}
