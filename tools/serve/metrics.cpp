// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "metrics.hpp"

#include <chrono>
#include <sstream>

#include "gateway_metrics.hpp"

namespace baton::serve {

void Histogram::observe(double seconds) {
  for (std::size_t i = 0; i < kBounds.size(); ++i)
    if (seconds <= kBounds[i]) ++counts[i];
  ++count;
  sum += seconds;
}

void Metrics::request(const std::string& model, int status) {
  const std::lock_guard lock(mutex_);
  ++requests_[{model, status}];
}

void Metrics::finished(const std::string& model, double latency_s, double ttft_s, long long prompt,
                       long long completion, long long generated) {
  const std::lock_guard lock(mutex_);
  PerModel& m = models_[model];
  m.latency.observe(latency_s);
  if (ttft_s >= 0) m.ttft.observe(ttft_s);
  m.prompt += prompt;
  m.completion += completion;
  m.generated += generated;
}

void Metrics::disconnected(const std::string& model) {
  const std::lock_guard lock(mutex_);
  ++disconnected_[model];
}

namespace {

/// Relay names are printable ASCII without quotes or backslashes (config.hpp checks "name";
/// a file's stem is escaped here all the same).
std::string label(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void histogram(std::ostringstream& o, const char* name, const std::string& model,
               const Histogram& h) {
  for (std::size_t i = 0; i < Histogram::kBounds.size(); ++i)
    o << name << "_bucket{model=\"" << label(model) << "\",le=\"" << Histogram::kBounds[i] << "\"} "
      << h.counts[i] << "\n";
  o << name << "_bucket{model=\"" << label(model) << "\",le=\"+Inf\"} " << h.count << "\n";
  o << name << "_sum{model=\"" << label(model) << "\"} " << h.sum << "\n";
  o << name << "_count{model=\"" << label(model) << "\"} " << h.count << "\n";
}

}  // namespace

std::string Metrics::render(const std::vector<const ServedRelay*>& relays) const {
  std::ostringstream o;
  const std::lock_guard lock(mutex_);
  o << "# HELP baton_requests_total HTTP requests to the relay endpoints, by relay and status.\n"
       "# TYPE baton_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    o << "baton_requests_total{model=\"" << label(key.first) << "\",status=\"" << key.second
      << "\"} " << n << "\n";
  o << "# HELP baton_disconnects_total Streams whose client went away before the end (the "
       "request was cancelled, its rows and slot freed).\n"
       "# TYPE baton_disconnects_total counter\n";
  for (const auto& [model, n] : disconnected_)
    o << "baton_disconnects_total{model=\"" << label(model) << "\"} " << n << "\n";
  o << "# HELP baton_tokens_total Tokens of finished requests: the request (prompt), the "
       "answer (completion), and every stage's output (generated).\n"
       "# TYPE baton_tokens_total counter\n";
  for (const auto& [model, m] : models_) {
    o << "baton_tokens_total{model=\"" << label(model) << "\",kind=\"prompt\"} " << m.prompt
      << "\n";
    o << "baton_tokens_total{model=\"" << label(model) << "\",kind=\"completion\"} " << m.completion
      << "\n";
    o << "baton_tokens_total{model=\"" << label(model) << "\",kind=\"generated\"} " << m.generated
      << "\n";
  }
  o << "# HELP baton_request_duration_seconds Time from a request's arrival to its last byte.\n"
       "# TYPE baton_request_duration_seconds histogram\n";
  for (const auto& [model, m] : models_)
    histogram(o, "baton_request_duration_seconds", model, m.latency);
  o << "# HELP baton_time_to_first_token_seconds Streamed requests: arrival to the first "
       "answer text sent.\n"
       "# TYPE baton_time_to_first_token_seconds histogram\n";
  for (const auto& [model, m] : models_)
    histogram(o, "baton_time_to_first_token_seconds", model, m.ttft);
  o << "# HELP baton_queue_depth Requests accepted and not finished (running or waiting).\n"
       "# TYPE baton_queue_depth gauge\n";
  std::vector<RelayCounters> c;
  for (const ServedRelay* r : relays) c.push_back(r->counters());
  for (std::size_t i = 0; i < relays.size(); ++i)
    o << "baton_queue_depth{model=\"" << label(relays[i]->name()) << "\"} " << c[i].pending << "\n";
  o << "# HELP baton_active_rows Rows (stage runs of requests) in the latest batched step.\n"
       "# TYPE baton_active_rows gauge\n";
  for (std::size_t i = 0; i < relays.size(); ++i)
    o << "baton_active_rows{model=\"" << label(relays[i]->name()) << "\"} " << c[i].last_rows
      << "\n";
  o << "# HELP baton_steps_total Batched forward steps.\n# TYPE baton_steps_total counter\n";
  for (std::size_t i = 0; i < relays.size(); ++i)
    o << "baton_steps_total{model=\"" << label(relays[i]->name()) << "\"} " << c[i].steps << "\n";
  o << "# HELP baton_rows_total Rows over all batched steps.\n# TYPE baton_rows_total counter\n";
  for (std::size_t i = 0; i < relays.size(); ++i)
    o << "baton_rows_total{model=\"" << label(relays[i]->name()) << "\"} " << c[i].rows << "\n";
  o << adapter_metrics(relays);
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  o << gateway_metrics(relays, std::chrono::duration<double>(now).count());
  return o.str();
}

}  // namespace baton::serve
