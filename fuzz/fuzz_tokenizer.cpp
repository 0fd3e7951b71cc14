// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
// tokenizer.json loading, then encoding and decoding: a tokenizer that loads must encode any
// valid UTF-8 text and decode any id list without failing other than by baton::error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/text/tokenizer.hpp"
#include "fuzz_common.hpp"

BATON_FUZZ_TARGET(tokenizer) {
  const baton::fuzz::MemFile file(data, size);
  try {
    const baton::Tokenizer tok = baton::Tokenizer::from_file(file.path());
    const std::string texts[] = {
        "Hello, world! 123 <|im_start|>user\nhi<|im_end|>",
        "  spaces\tand\nnewlines  ",
        "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80",
        baton::text::replace_invalid_utf8(baton::fuzz::as_text(data, size < 64 ? size : 64)),
    };
    for (const std::string& t : texts) {
      for (const bool special : {false, true}) {
        const std::vector<std::int32_t> ids = tok.encode(t, special);
        (void)tok.decode(ids);
        (void)tok.decode(ids, /*skip_special=*/true);
      }
    }
  } catch (const baton::error&) {
  }
  return 0;
}
