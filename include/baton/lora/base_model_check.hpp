// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Does an adapter's `base_model_name_or_path` name the model it is applied to?
///
/// Shapes are the binding check (LoraSlice::load refuses any module whose widths or rank do not
/// fit). A name cannot be binding: PEFT writes whatever path the base was loaded from during
/// training ("/tmp/run3", "Qwen/Qwen2.5-0.5B-Instruct", "./base"), and users keep models in
/// folders of their own naming. So the comparison is of the last path component, ignoring
/// case, and a mismatch is reported, not refused: `baton` prints it as a warning, and a
/// program that wants it binding turns it into an error with require_same_base().
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "baton/core/error.hpp"

namespace baton {

/// The last component of a model path or hub id, lower-cased: "Qwen/Qwen2.5-0.5B/" ->
/// "qwen2.5-0.5b".
inline std::string model_basename(std::string_view path) {
  while (!path.empty() && (path.back() == '/' || path.back() == '\\')) path.remove_suffix(1);
  const auto cut = path.find_last_of("/\\");
  if (cut != std::string_view::npos) path.remove_prefix(cut + 1);
  std::string out(path);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// The name of the model folder at `path`: the last component once the path is made absolute
/// and normalized, so "models/qwen/.", "./" (in models/qwen) and "qwen/" all give "qwen".
inline std::string model_folder_name(std::string_view path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(std::filesystem::path(path), ec);
  if (ec) p = std::filesystem::path(path);
  return model_basename(p.lexically_normal().generic_string());
}

/// A description of the mismatch when the adapter `slice` names a base model whose last path
/// component differs from that of `model.source()` (the folder it was loaded from); nullopt
/// when they agree or when the adapter names no base.
template <class Slice, class Model>
std::optional<std::string> base_model_mismatch(const Slice& slice, const Model& model) {
  const std::string& base = slice.base_model();
  if (base.empty() || model_basename(base) == model_folder_name(model.source()))
    return std::nullopt;
  return "adapter " + slice.name() + " says it was trained on \"" + base +
         "\" (base_model_name_or_path), but the model is " + model.source() +
         "; the shapes fit, so it is applied";
}

/// base_model_mismatch() as an error: config_error naming both.
template <class Slice, class Model>
void require_same_base(const Slice& slice, const Model& model) {
  if (const auto why = base_model_mismatch(slice, model)) BATON_FAIL(config_error, *why);
}

}  // namespace baton
