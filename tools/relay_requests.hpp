// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief `baton relay --requests FILE.jsonl`: many requests through the relay at once (the
///        batch scheduler), one result line each and a summary.
#pragma once

#include <filesystem>
#include <optional>

#include "baton/relay/runtime_relay_on.hpp"
#include "baton/text/tokenizer.hpp"

namespace baton::cli {

/// Runs every request of `file` (one JSON object per line: {"ids": [...]} or {"text": "..."};
/// blank lines skipped) through `relay` (pre-warmed, built with `concurrency` slots per
/// stage), keeping `concurrency` requests in flight; with `sequential`, one after another
/// through the relay's own run (no scheduler: the baseline batching is measured against).
/// Prints one line per request in file order, then a summary (requests/s, generated tokens/s,
/// latency p50/p99); JSON lines with `json`. Text requests are plain text (added tokens written
/// in them are not matched) unless `request_specials`. A line may carry its own "sampling"
/// (relay/sampling_json.hpp) for every stage; one that alters choices is refused when the relay
/// has an exact stage (`exact_stage` names it). Returns the exit status: 0, or 1 when a request
/// failed.
int run_request_file(RuntimeRelay& relay, const std::filesystem::path& file, int concurrency,
                     bool sequential, bool json, const std::optional<Tokenizer>& tok,
                     bool request_specials = false, const std::string& exact_stage = {});

}  // namespace baton::cli
