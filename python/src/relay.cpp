// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief baton.Relay: a relay file built, pre-warmed and run as `baton relay` does; run_many
///        through the batch scheduler as `baton relay --requests` does.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "batched_run.hpp"
#include "baton/text/relay_text.hpp"
#include "bindings.hpp"
#include "convert.hpp"
#include "relay_handle.hpp"
#include "relay_setup.hpp"

namespace baton::python {

namespace {

/// --concurrency's bound in `baton relay` (each stage gets that many slots of KV cache).
constexpr int kMaxSlots = 1024;

/// Every request through the batch scheduler, `concurrency` in flight, results in request
/// order (tools/batched_run.hpp, the loop `baton relay --requests` runs).
std::vector<RelayResult> run_batched(RuntimeRelay& relay,
                                     const std::vector<std::vector<std::int32_t>>& requests,
                                     int concurrency) {
  return cli::run_batched(
      relay, requests.size(), concurrency,
      [&](BatchedRelay& sched, std::size_t k) {
        return sched.submit(requests[k], RequestOptions{});
      },
      [](BatchedRelay& sched) { sched.step(); });
}

}  // namespace

RelayHandle::RelayHandle(const std::filesystem::path& path, const LoadOptions& load, int slots,
                         bool request_specials)
    : path_(path.string()), slots_(slots) {
  load.check();
  BATON_CHECK(slots >= 1 && slots <= kMaxSlots, usage_error, "slots=", slots, " is outside [1, ",
              kMaxSlots, "]");
  RelaySpec spec = load_relay_spec(path);
  if (load.backend) {
    spec.backend = *load.backend;  // "host" (LoadOptions::check): overrides the file's
  } else {
    BATON_CHECK(!spec.backend || *spec.backend == "host", config_error, path_,
                ": field 'backend' = \"", *spec.backend,
                "\", but this Python module runs the host backend only (backend='host' "
                "overrides the file)");
  }
  if (load.threads) spec.host.threads = *load.threads;
  if (load.bf16_products) spec.host.bf16_products = load.bf16_products;
  if (const auto isa = load.isa_family()) spec.host.isa = isa;
  if (const auto s = load.storage_type()) spec.storage = s;
  spec.slots = slots;
  // The model's tokenizer is taken when the file names none and it exists, as `baton relay
  // --requests` takes it: text requests then work whatever the file holds.
  tok_ = cli::relay_tokenizer(spec, path_, /*text_used=*/false, /*take_guess=*/true);
  if (tok_) resolve_text(spec, *tok_);
  relay_ = build_relay(spec);
  relay_->prewarm();
  specials_ = request_specials || spec.trusted_text;
  names_ = relay_->stage_names();
  output_stage_ = spec.output_stage >= 0 ? spec.output_stage : static_cast<int>(names_.size()) - 1;
}

void bind_relay(nb::module_& m) {
  nb::class_<RelayHandle>(m, "Relay",
                          "A relay of LoRA stages on one frozen model, from a relay JSON file "
                          "(docs/relay.md), built and pre-warmed on the host backend.")
      .def_static(
          "from_file",
          [](const std::string& path, std::optional<std::string> backend,
             std::optional<std::string> storage, std::optional<int> threads,
             std::optional<bool> bf16_products, std::optional<std::string> isa, int slots,
             bool request_specials) {
            const LoadOptions load{backend, storage, threads, bf16_products, isa};
            nb::gil_scoped_release unlocked;
            return std::make_shared<RelayHandle>(path, load, slots, request_specials);
          },
          nb::arg("path"), nb::kw_only(), nb::arg("backend") = nb::none(),
          nb::arg("storage") = nb::none(), nb::arg("threads") = nb::none(),
          nb::arg("bf16_products") = nb::none(), nb::arg("isa") = nb::none(), nb::arg("slots") = 1,
          nb::arg("request_specials") = false,
          "Reads `path` as `baton relay --config` does, builds the relay and pre-warms every "
          "stage's prefix. slots: requests each stage serves at once (run_many's concurrency "
          "at most); request_specials: request text may spell added tokens as those tokens "
          "(default: request text is plain text). storage, threads, bf16_products, isa and "
          "backend override the file as the CLI's options do.")
      .def(
          "run",
          [](RelayHandle& self, const Request& request) {
            const std::vector<std::int32_t> ids =
                request_ids(request, self.tokenizer(), self.specials(), "Relay.run");
            RelayResult r;
            {
              nb::gil_scoped_release unlocked;
              const Hold hold(self.exclusive(), "Relay.run");
              r = self.relay().run(ids);
            }
            return view_of(std::move(r), self.tokenizer(), self.output_stage(), self.stage_names());
          },
          nb::arg("request"),
          "Runs one request (text, or token ids used as given) through the relay: every stage "
          "in order, cycles until the gate passes or max_cycles. Raises the matching "
          "baton.Error when a stage fails.")
      .def(
          "run_many",
          [](RelayHandle& self, const std::vector<Request>& requests,
             std::optional<int> concurrency) {
            const int n = concurrency.value_or(self.slots());
            BATON_CHECK(n >= 1 && n <= self.slots(), usage_error, "run_many: concurrency=", n,
                        " is outside [1, ", self.slots(),
                        "] (the relay's slots; Relay.from_file(..., slots=N) gives more)");
            std::vector<std::vector<std::int32_t>> ids;
            for (const Request& r : requests)
              ids.push_back(request_ids(r, self.tokenizer(), self.specials(), "Relay.run_many"));
            std::vector<RelayResult> results;
            if (!ids.empty()) {
              nb::gil_scoped_release unlocked;
              const Hold hold(self.exclusive(), "Relay.run_many");
              results = run_batched(self.relay(), ids, n);
            }
            std::vector<RelayResultView> out;
            for (RelayResult& r : results)
              out.push_back(
                  view_of(std::move(r), self.tokenizer(), self.output_stage(), self.stage_names()));
            return out;
          },
          nb::arg("requests"), nb::kw_only(), nb::arg("concurrency") = nb::none(),
          "Runs every request through the batch scheduler, `concurrency` at a time (default: "
          "the relay's slots), batching the rows of every request and stage into one forward "
          "per step. Results come in request order and equal each request run alone; a request "
          "that fails gets verdict 'error' and its message, and the others go on.")
      .def(
          "prewarm",
          [](RelayHandle& self) {
            nb::gil_scoped_release unlocked;
            const Hold hold(self.exclusive(), "Relay.prewarm");
            self.relay().prewarm();
          },
          "Computes every stage's prefix again from an empty cache (after it was built, the "
          "relay is warm already).")
      .def(
          "encode",
          [](RelayHandle& self, const std::string& text) {
            // Under the GIL, as run() encodes: the tokenizer's cache is not for two threads.
            return request_ids(text, self.tokenizer(), self.specials(), "Relay.encode");
          },
          nb::arg("text"), "The ids a text request becomes (as run() encodes it).")
      .def(
          "decode",
          [](RelayHandle& self, const std::vector<std::int32_t>& ids) {
            BATON_CHECK(self.tokenizer() != nullptr, usage_error, self.path(),
                        ": the relay has no tokenizer");
            return decode_text(*self.tokenizer(), ids);
          },
          nb::arg("ids"), "The text of `ids` in the relay's tokenizer.")
      .def(
          "prefix",
          [](const RelayHandle& self, const std::string& stage) {
            const auto& names = self.stage_names();
            for (std::size_t i = 0; i < names.size(); ++i)
              if (names[i] == stage) return self.relay().prefix(static_cast<int>(i));
            BATON_FAIL(usage_error, self.path(), ": no stage named '", detail::excerpt(stage), "'");
          },
          nb::arg("stage"), "The pre-warmed prefix ids of the stage named `stage`.")
      .def_prop_ro("stage_names", &RelayHandle::stage_names, "The stages' names, in relay order.")
      .def_prop_ro("path", &RelayHandle::path, "The relay file.")
      .def_prop_ro("slots", &RelayHandle::slots, "Requests each stage serves at once.")
      .def_prop_ro(
          "has_tokenizer", [](const RelayHandle& h) { return h.tokenizer() != nullptr; },
          "Whether text requests and text results are available.")
      .def_prop_ro(
          "warnings", [](const RelayHandle& h) { return h.relay().warnings(); },
          "What building the relay noticed but did not refuse, one sentence each.")
      .def_prop_ro(
          "backend", [](const RelayHandle& h) { return std::string(h.relay().backend_name()); },
          "The backend the relay runs on.")
      .def("__repr__", [](const RelayHandle& h) {
        std::string names;
        for (const std::string& n : h.stage_names()) names += (names.empty() ? "" : " -> ") + n;
        return "Relay(" + repr_str(h.path()) + ", stages=" + repr_str(names) +
               ", slots=" + std::to_string(h.slots()) + ", backend='" +
               std::string(h.relay().backend_name()) + "')";
      });
}

}  // namespace baton::python
