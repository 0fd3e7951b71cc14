// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Where the bundled word-problem model is in this checkout (bundled_dir.cpp).
#pragma once

#include <filesystem>

namespace word_problems {

/// models/word-problems in this checkout.
std::filesystem::path bundled_dir();

}  // namespace word_problems
