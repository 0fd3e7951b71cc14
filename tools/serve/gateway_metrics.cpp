// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "gateway_metrics.hpp"

#include <sstream>

namespace baton::serve {

std::string gateway_metrics(const std::vector<const ServedRelay*>& relays, double now_s) {
  long long running = 0, waiting = 0, slots = 0;
  for (const ServedRelay* r : relays) {
    const RelayCounters c = r->counters();
    running += c.running;
    // Counted apart, so a request between the two reads can make pending lag running.
    waiting += c.pending > c.running ? c.pending - c.running : 0;
    slots += c.slots;
  }
  std::ostringstream o;
  o << "# HELP vllm:num_requests_waiting Requests accepted and waiting for a slot.\n"
       "# TYPE vllm:num_requests_waiting gauge\n"
       "vllm:num_requests_waiting "
    << waiting << "\n";
  o << "# HELP vllm:num_requests_running Requests on a slot, in the batched steps.\n"
       "# TYPE vllm:num_requests_running gauge\n"
       "vllm:num_requests_running "
    << running << "\n";
  o << "# HELP vllm:kv_cache_usage_perc KV cache in use, 0..1: slots held over all slots.\n"
       "# TYPE vllm:kv_cache_usage_perc gauge\n"
       "vllm:kv_cache_usage_perc "
    << (slots > 0 ? static_cast<double>(running) / static_cast<double>(slots) : 0.0) << "\n";
  // Always present (max_lora 0 without adapters), so a picker that scrapes it finds it.
  int max_lora = 0;
  std::string run, wait;
  for (const ServedRelay* r : relays) {
    const AdapterTable* t = r->adapters();
    if (!t) continue;
    const AdapterSnapshot s = t->snapshot();
    max_lora = s.max_loras;
    for (const AdapterSnapshot::Entry& a : s.adapters) {  // by name: the lists come sorted
      if (a.in_flight == 0) continue;
      std::string& list = a.slot >= 0 ? run : wait;
      list += (list.empty() ? "" : ",") + a.name;
    }
    break;  // one served model takes adapters
  }
  // Names are printable ASCII without '"', '\\' or ',' (adapter_api.cpp): no escaping.
  o << "# HELP vllm:lora_requests_info Adapters running and waiting; the value is when this "
       "was taken (unix seconds).\n"
       "# TYPE vllm:lora_requests_info gauge\n"
       "vllm:lora_requests_info{max_lora=\""
    << max_lora << "\",running_lora_adapters=\"" << run << "\",waiting_lora_adapters=\"" << wait
    << "\"} " << std::fixed << now_s << "\n";
  return o.str();
}

std::string adapter_metrics(const std::vector<const ServedRelay*>& relays) {
  std::ostringstream o;
  for (const ServedRelay* r : relays) {
    if (!r->adapters()) continue;
    const AdapterSnapshot s = r->adapters()->snapshot();
    int memory = 0, slot = 0;
    for (const AdapterSnapshot::Entry& a : s.adapters) {
      memory += a.in_memory ? 1 : 0;
      slot += a.slot >= 0 ? 1 : 0;
    }
    o << "# HELP baton_adapters Adapters served: registered, held in memory (max_cpu_loras), in "
         "a slot (max_loras).\n# TYPE baton_adapters gauge\n"
      << "baton_adapters{state=\"registered\"} " << s.adapters.size() << "\n"
      << "baton_adapters{state=\"in_memory\"} " << memory << "\n"
      << "baton_adapters{state=\"in_slot\"} " << slot << "\n";
    o << "# HELP baton_adapter_placements_total Adapters put into a slot.\n"
         "# TYPE baton_adapter_placements_total counter\n"
      << "baton_adapter_placements_total " << s.loads << "\n";
    o << "# HELP baton_adapter_evictions_total Adapters taken out of a slot for another.\n"
         "# TYPE baton_adapter_evictions_total counter\n"
      << "baton_adapter_evictions_total " << s.evictions << "\n";
    o << "# HELP baton_adapter_reads_total Adapters read from their folder (loads and reloads).\n"
         "# TYPE baton_adapter_reads_total counter\n"
      << "baton_adapter_reads_total " << s.reads << "\n";
    break;
  }
  return o.str();
}

}  // namespace baton::serve
