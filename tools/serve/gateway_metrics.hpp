// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief What the Kubernetes Gateway API Inference Extension's endpoint picker reads from a
///        model server (its model-server protocol, docs/scale-out.md cites the version), under
///        the vLLM names the picker scrapes by default: requests waiting and running, KV cache
///        use, and the LoRA adapter info gauge. One series each for the whole server.
#pragma once

#include <string>
#include <vector>

#include "served_relay.hpp"

namespace baton::serve {

/// The exposition of those metrics (Prometheus text format 0.0.4) for `relays`, the adapter
/// info gauge stamped `now_s` (unix seconds: the picker takes the newest series).
///   vllm:num_requests_waiting   gauge  requests accepted and not on a slot yet
///   vllm:num_requests_running   gauge  requests on a stage's slot
///   vllm:kv_cache_usage_perc    gauge  slots in use over all slots (0..1): a slot's KV is
///                                      reserved whole while a request holds it
///   vllm:lora_requests_info     gauge  labels max_lora (adapter slots), running_lora_adapters
///                                      (adapters in a slot with requests in flight),
///                                      waiting_lora_adapters (adapters whose requests wait for
///                                      a slot), comma-separated, sorted; max_lora 0 and
///                                      empty lists on a server without adapters
std::string gateway_metrics(const std::vector<const ServedRelay*>& relays, double now_s);

/// baton's own counts behind that gauge, for the served model that takes adapters (empty
/// without one): baton_adapters{state} (registered, in_memory, in_slot), and the counters
/// baton_adapter_placements_total, baton_adapter_evictions_total, baton_adapter_reads_total.
std::string adapter_metrics(const std::vector<const ServedRelay*>& relays);

}  // namespace baton::serve
