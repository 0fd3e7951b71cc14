// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// The bundled model's folder in this checkout, the one fact of the build the demo and eval
// programs need. It sits in a unit of its own because the path is absolute: kept out of the
// large units, it leaves them identical between two clones, so a compiler cache shares them.
#include "bundled_dir.hpp"

namespace word_problems {

std::filesystem::path bundled_dir() { return BATON_WORD_PROBLEMS_DIR; }

}  // namespace word_problems
