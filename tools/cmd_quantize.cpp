// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// `baton quantize --model DIR --storage q8_0|q4_0`: writes the checkpoint's matrices as GGML
/// blocks into DIR/model.<storage>.safetensors (model/quantized_file.hpp), which a model loaded
/// with that storage (a relay file's "storage", --storage) then reads instead of quantizing at
/// every load. The file's header names the checkpoint (its files' sizes, times and SHA-256).
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "args.hpp"
#include "baton/io/safetensors.hpp"
#include "baton/model/quantized_file.hpp"
#include "commands.hpp"
#include "storage_choice.hpp"

namespace quantize_command {

constexpr std::string_view kUsage =
    "usage: baton quantize --model DIR --storage q8_0|q4_0 [--out FILE]\n"
    "  --model DIR      Hugging Face model folder (config.json + safetensors; f32/bf16/f16)\n"
    "  --storage S      q8_0 (8.5 bits a weight) or q4_0 (4.5 bits): GGML's blocks of 32,\n"
    "                   rounded to nearest as llama.cpp's quantizer does\n"
    "  --out FILE       where to write (default DIR/model.<storage>.safetensors, the file\n"
    "                   loading with that storage looks for)\n"
    "Every 2-D tensor is quantized by rows; one whose rows are not a multiple of 32 is kept in\n"
    "f16 (listed). Prints the file written and its size.\n";

}  // namespace quantize_command

int cmd_quantize(int argc, char** argv) {
  using namespace quantize_command;
  using namespace baton;
  std::string model, out;
  std::optional<Storage> storage;
  try {
    cli::SeenOptions seen;
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const auto value = [&]() -> std::string_view {
        seen.once(arg);
        if (i + 1 >= argc) throw cli::ArgError{std::string(arg) + " needs a value"};
        return argv[++i];
      };
      if (arg == "--help" || arg == "-h") {
        std::cout << kUsage;
        return 0;
      } else if (arg == "--model") {
        model = std::string(value());
      } else if (arg == "--out") {
        out = std::string(value());
      } else if (cli::parse_storage_option(arg, value, storage)) {
      } else {
        throw cli::ArgError{"unknown option '" + detail::excerpt(arg) + "'"};
      }
    }
    if (model.empty()) throw cli::ArgError{"--model DIR is required"};
    if (storage != Storage::q8_0 && storage != Storage::q4_0)
      throw cli::ArgError{"--storage q8_0 or q4_0 is required"};
  } catch (const cli::ArgError& e) {
    std::cerr << "baton quantize: " << e.message << "\n\n" << kUsage;
    return 2;
  }
  const BlockFormat f = *storage == Storage::q8_0 ? BlockFormat::q8_0 : BlockFormat::q4_0;
  const std::filesystem::path dest =
      out.empty() ? quantized_file_path(model, f) : std::filesystem::path(out);
  const io::TensorSource src = io::TensorSource::open_dir(model);
  for (const std::string& name : write_quantized_file(src, f, dest))
    std::cerr << "baton quantize: " << name << " kept in f16 (its rows are not a multiple of 32)\n";
  std::cout << dest.string() << " " << std::filesystem::file_size(dest) << " bytes\n";
  return 0;
}
