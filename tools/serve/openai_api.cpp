// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
#include "openai_api.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <span>

#include "baton/core/error.hpp"
#include "baton/intercept/request_stops.hpp"
#include "baton/io/json_util.hpp"

namespace baton::serve {

namespace {

ApiError bad(std::string param, std::string message, std::string code = "") {
  ApiError e;
  e.param = std::move(param);
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

/// A field's value for messages: JSON, cut short.
std::string shown(const nlohmann::json& v) {
  return detail::excerpt(v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

/// Fields every endpoint takes; a sampling field only at its greedy value.
constexpr std::string_view kCommon[] = {"model",
                                        "stream",
                                        "stream_options",
                                        "max_tokens",
                                        "temperature",
                                        "top_p",
                                        "n",
                                        "seed",
                                        "user",
                                        "presence_penalty",
                                        "frequency_penalty",
                                        "logprobs",
                                        "stop",
                                        "logit_bias",
                                        "top_k",
                                        "min_p",
                                        "repeat_penalty",
                                        "repeat_last_n"};
constexpr std::string_view kChat[] = {"messages", "max_completion_tokens", "response_format",
                                      "tool_choice", "top_logprobs"};
constexpr std::string_view kCompletion[] = {"prompt", "echo", "suffix", "best_of"};

bool listed(std::string_view key, std::span<const std::string_view> keys) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// A field that must be absent, null or `allowed`.
void only_value(const nlohmann::json& j, const char* key, const nlohmann::json& allowed,
                const char* why) {
  if (!j.contains(key) || j[key].is_null() || j[key] == allowed) return;
  throw bad(key, std::string("'") + key + "' = " + shown(j[key]) + " is not supported: " + why);
}

/// A number field in [lo, hi] (or absent/null): its value, or a 400 naming it.
std::optional<double> ranged_number(const nlohmann::json& j, const char* key, double lo,
                                    double hi) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number())
    throw bad(key, std::string("'") + key + "' must be a number, got " + shown(j[key]));
  const double v = j[key].get<double>();
  if (!(v >= lo && v <= hi))
    throw bad(key, std::string("'") + key + "' = " + shown(j[key]) + " is out of range [" +
                       shown(lo) + ", " + shown(hi) + "]");
  return v;
}

/// The sampling fields into r.sampling (set when any is present). Ranges as OpenAI documents
/// them (temperature 0..2, top_p 0..1, penalties -2..2, logit_bias -100..100, top_logprobs
/// 0..20); llama-server's top_k >= 0, min_p 0..1, repeat_penalty > 0, repeat_last_n >= -1.
void read_sampling_fields(const nlohmann::json& j, bool chat, ApiRequest& r) {
  SamplingOptions o;
  bool any = false;
  auto real = [&](const char* key, double lo, double hi, float& out) {
    if (const auto v = ranged_number(j, key, lo, hi)) {
      out = static_cast<float>(*v);
      any = true;
    }
  };
  real("temperature", 0.0, 2.0, o.params.temperature);
  real("top_p", 0.0, 1.0, o.params.top_p);
  real("min_p", 0.0, 1.0, o.params.min_p);
  real("presence_penalty", -2.0, 2.0, o.params.presence_penalty);
  real("frequency_penalty", -2.0, 2.0, o.params.frequency_penalty);
  real("repeat_penalty", 0.0, 1e6, o.params.repeat_penalty);
  if (j.contains("repeat_penalty") && !j["repeat_penalty"].is_null() &&
      o.params.repeat_penalty <= 0.0f)
    throw bad("repeat_penalty", "'repeat_penalty' must be > 0 (1 is off)");
  if (const auto n = ranged_number(j, "repeat_last_n", -1.0, 1e9)) {
    if (!j["repeat_last_n"].is_number_integer())
      throw bad("repeat_last_n", "'repeat_last_n' must be an integer (-1: every generated token)");
    o.repeat_last_n = static_cast<int>(*n);
    any = true;
  }
  if (const auto k = ranged_number(j, "top_k", 0.0, 1e9)) {
    if (!j["top_k"].is_number_integer()) throw bad("top_k", "'top_k' must be an integer");
    o.params.top_k = static_cast<int>(*k);
    any = true;
  }
  if (j.contains("seed") && !j["seed"].is_null()) {
    const auto& s = j["seed"];
    if (!s.is_number_integer()) throw bad("seed", "'seed' must be an integer, got " + shown(s));
    // OpenAI's seed is a signed 64-bit integer: its bits are the key.
    o.seed = s.is_number_unsigned() ? s.get<std::uint64_t>()
                                    : static_cast<std::uint64_t>(s.get<std::int64_t>());
    r.seeded = true;
    any = true;
  }
  if (j.contains("logit_bias") && !j["logit_bias"].is_null()) {
    const auto& b = j["logit_bias"];
    if (!b.is_object())
      throw bad("logit_bias", "'logit_bias' must be an object {\"token id\": bias}");
    for (const auto& [key, value] : b.items()) {
      long long id = -1;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (ec != std::errc{} || end != key.data() + key.size() || id < 0 || id >= (1LL << 30))
        throw bad("logit_bias",
                  "'logit_bias' has key '" + detail::excerpt(key) + "', not a token id");
      if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
        throw bad("logit_bias",
                  "'logit_bias[" + key + "]' = " + shown(value) + " is out of range [-100, 100]");
      o.logit_bias.push_back({static_cast<std::int32_t>(id), value.get<float>()});
    }
    any = any || !o.logit_bias.empty();
  }
  // Chat: "logprobs": true and "top_logprobs": N; completions: "logprobs": N (the alternatives).
  if (chat) {
    if (j.contains("logprobs") && !j["logprobs"].is_null()) {
      if (!j["logprobs"].is_boolean())
        throw bad("logprobs", "'logprobs' must be true or false, got " + shown(j["logprobs"]));
      o.logprobs = j["logprobs"].get<bool>();
    }
    if (const auto n = ranged_number(j, "top_logprobs", 0, kernels::kMaxTopLogprobs)) {
      if (!j["top_logprobs"].is_number_integer())
        throw bad("top_logprobs", "'top_logprobs' must be an integer");
      if (!o.logprobs) throw bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
      o.top_logprobs = static_cast<int>(*n);
    }
  } else if (const auto n = ranged_number(j, "logprobs", 0, kernels::kMaxTopLogprobs)) {
    if (!j["logprobs"].is_number_integer())
      throw bad("logprobs", "'logprobs' must be an integer (0..20)");
    o.logprobs = true;
    o.top_logprobs = static_cast<int>(*n);
  }
  any = any || o.logprobs;
  if (any) r.sampling = std::move(o);
}

std::string text_of_content(const nlohmann::json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    throw bad(where, "'" + where + "' must be a string or an array of text parts");
  std::string out;
  for (std::size_t i = 0; i < content.size(); ++i) {
    const auto& part = content[i];
    const std::string pw = where + "[" + std::to_string(i) + "]";
    if (!part.is_object() || part.size() != 2 || part.value("type", nlohmann::json()) != "text" ||
        !part.contains("text") || !part["text"].is_string())
      throw bad(pw, "'" + pw + "' must be {\"type\": \"text\", \"text\": \"...\"} (only text)");
    out += part["text"].get<std::string>();
  }
  return out;
}

/// Fields a message may have (only text is taken: no tools, no audio).
constexpr std::string_view kMessage[] = {"role", "content", "name"};
constexpr std::string_view kRoles[] = {"system", "developer", "user", "assistant"};

/// Checks one message (known fields, a known role, text content; an assistant's may be null)
/// and returns it with its content as one string (or null).
nlohmann::ordered_json checked_message(const nlohmann::json& m, const std::string& w) {
  if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
    throw bad(w, "'" + w + "' must be an object with a string 'role'");
  for (const auto& [key, value] : m.items())
    if (!listed(key, kMessage))
      throw bad(w + "." + key, "unknown field '" + w + "." + detail::excerpt(key) + "'",
                "unknown_parameter");
  const std::string role = m["role"].get<std::string>();
  if (!listed(role, kRoles))
    throw bad(w + ".role", "'" + w + ".role' = " + shown(m["role"]) +
                               " is not supported (system, developer, user, assistant)");
  if (m.contains("name") && !m["name"].is_string())
    throw bad(w + ".name", "'" + w + ".name' must be a string");
  if (!m.contains("content")) throw bad(w + ".content", "'" + w + ".content' is required");
  nlohmann::ordered_json out = {{"role", role}, {"content", nullptr}};
  if (!(role == "assistant" && m["content"].is_null()))
    out["content"] = text_of_content(m["content"], w + ".content");
  if (m.contains("name")) out["name"] = m["name"].get<std::string>();
  return out;
}

/// The chat's conversation, every message checked.
nlohmann::ordered_json read_messages(const nlohmann::json& j) {
  if (!j.contains("messages")) throw bad("messages", "'messages' is required");
  const auto& m = j["messages"];
  if (!m.is_array() || m.empty())
    throw bad("messages", "'messages' must be a non-empty array of messages");
  auto out = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < m.size(); ++i)
    out.push_back(checked_message(m[i], "messages[" + std::to_string(i) + "]"));
  return out;
}

/// The completion's prompt: a string, one string in an array, or token ids.
void read_prompt(const nlohmann::json& j, ApiRequest& r) {
  if (!j.contains("prompt")) throw bad("prompt", "'prompt' is required");
  const auto& p = j["prompt"];
  if (p.is_string()) {
    r.text = p.get<std::string>();
    return;
  }
  const bool one_string = p.is_array() && p.size() == 1 && p[0].is_string();
  if (one_string) {
    r.text = p[0].get<std::string>();
    return;
  }
  const nlohmann::json& ids = p.is_array() && p.size() == 1 && p[0].is_array() ? p[0] : p;
  if (!ids.is_array() || ids.empty())
    throw bad("prompt", "'prompt' must be a string or token ids (one prompt per request)");
  std::vector<std::int32_t> v;
  for (const auto& x : ids) {
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() >= (1LL << 30))
      throw bad("prompt",
                "'prompt' holds " + shown(x) + ", not a token id (one prompt per request)");
    v.push_back(static_cast<std::int32_t>(x.get<long long>()));
  }
  r.ids = std::move(v);
}

int read_max_tokens(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return 0;
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1LL << 30))
    throw bad(key, std::string("'") + key + "' must be a positive integer, got " + shown(v));
  return static_cast<int>(v.get<long long>());
}

/// "stop": null, a string, or an array of up to kMaxRequestStops strings, each 1..64 bytes.
std::vector<std::string> read_stop(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (!j.contains("stop") || j["stop"].is_null()) return out;
  const nlohmann::json& v = j["stop"];
  if (!v.is_string() && !v.is_array())
    throw bad("stop", "'stop' must be a string or an array of strings, got " + shown(v));
  const nlohmann::json list = v.is_string() ? nlohmann::json::array({v}) : v;
  if (list.size() > static_cast<std::size_t>(kMaxRequestStops))
    throw bad("stop", "'stop' holds " + std::to_string(list.size()) + " strings; at most " +
                          std::to_string(kMaxRequestStops));
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string where = "stop[" + std::to_string(k) + "]";
    if (!list[k].is_string()) throw bad("stop", "'" + where + "' must be a string");
    const auto& text = list[k].get_ref<const std::string&>();
    if (text.empty() || text.size() > static_cast<std::size_t>(kMaxRequestStopBytes))
      throw bad("stop", "'" + where + "' has " + std::to_string(text.size()) +
                            " bytes; each stop string needs 1.." +
                            std::to_string(kMaxRequestStopBytes));
    out.push_back(text);
  }
  return out;
}

}  // namespace

nlohmann::json error_body(const ApiError& e) {
  return {{"error",
           {{"message", e.message},
            {"type", e.type},
            {"param", e.param.empty() ? nlohmann::json() : nlohmann::json(e.param)},
            {"code", e.code.empty() ? nlohmann::json() : nlohmann::json(e.code)}}}};
}

std::size_t cut_at_stop(std::string_view text, const std::vector<std::string>& stops, bool final,
                        bool* found) {
  std::size_t cut = text.size();
  bool any = false;
  for (const std::string& s : stops) {
    const std::size_t at = text.find(s);
    if (at != std::string_view::npos && at < cut) {
      cut = at;
      any = true;
    }
  }
  if (found) *found = any;
  if (final || any) return cut;
  // Still growing: hold back a tail that may be the start of a stop string.
  std::size_t keep = cut;
  for (const std::string& s : stops)
    for (std::size_t n = std::min(s.size() - 1, text.size()); n > 0; --n)
      if (text.substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        keep = std::min(keep, text.size() - n);
        break;
      }
  return keep;
}

nlohmann::json parse_body(std::string_view body) {
  // Strict as the file parser: a duplicate key would leave two readers of the same request
  // disagreeing (a proxy checks one value, the server uses the other), and nesting is bounded
  // before anything is built. A NUL byte would end nlohmann's input early.
  if (body.find('\0') != std::string_view::npos)
    throw bad("", "the body is not valid JSON: it holds a NUL byte", "invalid_json");
  io::detail::JsonChecker checker(io::kMaxJsonDepth);
  nlohmann::json::sax_parse(body.begin(), body.end(), &checker,
                            nlohmann::json::input_format_t::json, /*strict=*/true,
                            /*ignore_comments=*/false);
  if (checker.too_deep)
    throw bad("", "the body nests deeper than " + std::to_string(io::kMaxJsonDepth) + " levels",
              "invalid_json");
  if (checker.duplicate_)
    throw bad(*checker.duplicate_,
              "duplicate key '" + detail::excerpt(*checker.duplicate_) +
                  "' in the body: each key may appear once in an object",
              "duplicate_key");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw bad("", std::string("the body is not valid JSON: ") + e.what(), "invalid_json");
  }
  if (!j.is_object()) throw bad("", "the body must be a JSON object");
  return j;
}

ApiRequest parse_request(std::string_view body, Endpoint endpoint) {
  const nlohmann::json j = parse_body(body);
  const bool chat = endpoint == Endpoint::chat;
  using Keys = std::span<const std::string_view>;
  const Keys own = chat ? Keys(kChat) : Keys(kCompletion);
  const Keys other = chat ? Keys(kCompletion) : Keys(kChat);
  for (const auto& [key, value] : j.items()) {
    if (listed(key, kCommon) || listed(key, own)) continue;
    throw bad(key,
              "unknown field '" + detail::excerpt(key) + "'" +
                  (listed(key, other)
                       ? std::string(" for ") + (chat ? "/v1/chat/completions" : "/v1/completions")
                       : ""),
              "unknown_parameter");
  }
  ApiRequest r;
  r.endpoint = endpoint;
  if (!j.contains("model")) throw bad("model", "'model' is required (a relay: GET /v1/models)");
  if (!j["model"].is_string())
    throw bad("model", "'model' must be a string, got " + shown(j["model"]));
  r.model = j["model"].get<std::string>();
  if (j.contains("stream") && !j["stream"].is_null()) {
    if (!j["stream"].is_boolean())
      throw bad("stream", "'stream' must be true or false, got " + shown(j["stream"]));
    r.stream = j["stream"].get<bool>();
  }
  if (j.contains("stream_options") && !j["stream_options"].is_null()) {
    const auto& so = j["stream_options"];
    if (!r.stream) throw bad("stream_options", "'stream_options' applies only with 'stream': true");
    if (!so.is_object()) throw bad("stream_options", "'stream_options' must be an object");
    for (const auto& [key, value] : so.items()) {
      if (key != "include_usage")
        throw bad("stream_options." + key,
                  "unknown field 'stream_options." + detail::excerpt(key) + "'");
      if (!value.is_boolean())
        throw bad("stream_options.include_usage",
                  "'stream_options.include_usage' must be true or false");
      r.include_usage = value.get<bool>();
    }
  }
  r.max_tokens = read_max_tokens(j, "max_tokens");
  if (chat && j.contains("max_completion_tokens") && !j["max_completion_tokens"].is_null()) {
    if (r.max_tokens)
      throw bad("max_completion_tokens", "give 'max_tokens' or 'max_completion_tokens', not both");
    r.max_tokens = read_max_tokens(j, "max_completion_tokens");
  }
  if (j.contains("n") && !j["n"].is_null()) {
    const auto& v = j["n"];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kMaxChoices)
      throw bad("n", "'n' must be an integer from 1 to " + std::to_string(kMaxChoices) + ", got " +
                         shown(v));
    r.n = static_cast<int>(v.get<long long>());
  }
  if (j.contains("best_of") && !j["best_of"].is_null()) {
    const auto& v = j["best_of"];
    if (!v.is_number_integer() || v.get<long long>() < r.n || v.get<long long>() > kMaxChoices)
      throw bad("best_of", "'best_of' must be an integer from n (" + std::to_string(r.n) + ") to " +
                               std::to_string(kMaxChoices) + ", got " + shown(v));
    if (r.stream)
      throw bad("best_of", "'best_of' cannot be streamed (its choices are picked at the end)");
    r.best_of = static_cast<int>(v.get<long long>());
  }
  read_sampling_fields(j, chat, r);
  if (j.contains("user") && !j["user"].is_null() && !j["user"].is_string())
    throw bad("user", "'user' must be a string");
  r.stop = read_stop(j);
  only_value(j, "echo", false, "the prompt is not echoed");
  only_value(j, "suffix", "", "no suffix");
  only_value(j, "response_format", nlohmann::json{{"type", "text"}},
             "constrain a stage with its 'grammar' in the relay file");
  only_value(j, "tool_choice", "none", "tools are not supported");
  if (chat) {
    r.messages = read_messages(j);
  } else {
    read_prompt(j, r);
  }
  return r;
}

std::string last_user_message(const nlohmann::ordered_json& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it)
    if ((*it)["role"] == "user") return (*it)["content"].get<std::string>();
  throw bad("messages", "'messages' holds no message with role 'user'");
}

nlohmann::json logprobs_body(Endpoint endpoint, std::span<const TokenLogprobs> lp,
                             const std::function<std::string(std::int32_t)>& text,
                             std::size_t text_offset) {
  const auto bytes = [](const std::string& s) {
    std::vector<int> b;
    for (const char c : s) b.push_back(static_cast<unsigned char>(c));
    return b;
  };
  if (endpoint == Endpoint::chat) {
    nlohmann::json content = nlohmann::json::array();
    for (const TokenLogprobs& t : lp) {
      nlohmann::json top = nlohmann::json::array();
      for (int k = 0; k < t.n_top; ++k) {
        const kernels::TopLogprob& e = t.top[static_cast<std::size_t>(k)];
        const std::string s = text(e.id);
        top.push_back({{"token", s}, {"logprob", e.logprob}, {"bytes", bytes(s)}});
      }
      const std::string s = text(t.id);
      content.push_back({{"token", s},
                         {"logprob", t.logprob},
                         {"bytes", bytes(s)},
                         {"top_logprobs", std::move(top)}});
    }
    return {{"content", std::move(content)}, {"refusal", nullptr}};
  }
  nlohmann::json tokens = nlohmann::json::array(), values = nlohmann::json::array(),
                 tops = nlohmann::json::array(), offsets = nlohmann::json::array();
  std::size_t offset = text_offset;
  for (const TokenLogprobs& t : lp) {
    const std::string s = text(t.id);
    tokens.push_back(s);
    values.push_back(t.logprob);
    offsets.push_back(offset);
    offset += s.size();
    nlohmann::json top = nlohmann::json::object();
    for (int k = 0; k < t.n_top; ++k) {
      const kernels::TopLogprob& e = t.top[static_cast<std::size_t>(k)];
      top[text(e.id)] = e.logprob;
    }
    tops.push_back(std::move(top));
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(values)},
          {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

nlohmann::json usage_body(const Answer& a) {
  return {{"prompt_tokens", a.prompt_tokens},
          {"completion_tokens", a.completion_tokens},
          {"total_tokens", a.prompt_tokens + a.completion_tokens}};
}

nlohmann::json usage_body(std::span<const Answer> answers) {
  Answer sum;
  if (!answers.empty()) sum.prompt_tokens = answers.front().prompt_tokens;
  for (const Answer& a : answers) sum.completion_tokens += a.completion_tokens;
  return usage_body(sum);
}

nlohmann::json baton_body(std::span<const Answer> answers) {
  if (answers.size() == 1) return answers.front().baton;
  nlohmann::json each = nlohmann::json::array();
  for (const Answer& a : answers) each.push_back(a.baton);
  return {{"choices", std::move(each)}};
}

nlohmann::json response_body(const ApiRequest& req, const std::string& id, long long created,
                             std::span<const Answer> answers) {
  const bool chat = req.endpoint == Endpoint::chat;
  nlohmann::json choices = nlohmann::json::array();
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const Answer& a = answers[i];
    nlohmann::json choice = {
        {"index", i}, {"finish_reason", a.finish_reason}, {"logprobs", a.logprobs}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", a.text}};
    } else {
      choice["text"] = a.text;
    }
    choices.push_back(std::move(choice));
  }
  return {{"id", id},
          {"object", chat ? "chat.completion" : "text_completion"},
          {"created", created},
          {"model", req.model},
          {"choices", std::move(choices)},
          {"usage", usage_body(answers)},
          {"baton", baton_body(answers)}};
}

nlohmann::json chunk_body(const ApiRequest& req, const std::string& id, long long created,
                          const std::string& delta, const std::string* finish, int index) {
  const bool chat = req.endpoint == Endpoint::chat;
  nlohmann::json choice = {{"index", index},
                           {"finish_reason", finish ? nlohmann::json(*finish) : nlohmann::json()},
                           {"logprobs", nullptr}};
  if (chat) {
    choice["delta"] = finish ? nlohmann::json::object() : nlohmann::json{{"content", delta}};
  } else {
    choice["text"] = delta;
  }
  return {{"id", id},
          {"object", chat ? "chat.completion.chunk" : "text_completion"},
          {"created", created},
          {"model", req.model},
          {"choices", nlohmann::json::array({std::move(choice)})}};
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace baton::serve
