// SPDX-FileCopyrightText: 2026 The baton authors
// SPDX-License-Identifier: MIT
/// @file
/// @brief Interceptor state per request and per branch: BranchState (one decode stream's states,
///        one per chain member) and RequestState (a request's branches, keyed by name).
///
/// A branch is a named decode stream within a request: a stage's generation, or each side of a
/// guided decode. Every branch gets fresh states from the chain when it opens (initial_state),
/// so nothing carries over between requests or between branches. The device members' states
/// live in backend memory (a one-element backend buffer; on the host backend that is host
/// memory the loop reads directly); the host members' states and the params stay on the host.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "baton/backend/backend.hpp"
#include "baton/core/error.hpp"
#include "baton/intercept/chain.hpp"

namespace baton {

/// The interceptor states of one branch of one request. Not movable: decoders hold its address.
template <InterceptorChain C, Backend B>
class BranchState {
 public:
  using chain_type = C;
  using device_buffer = typename B::template buffer<typename C::device_state>;

  /// States in a buffer of their own (uploaded: a load-time allocation and copy).
  BranchState(const C& chain, std::string name, const BranchInfo& info)
      : BranchState(chain, std::move(name), info, nullptr) {
    if constexpr (C::has_device_members) {
      const typename C::device_state init = chain.initial_device_state(with_name(info));
      owned_ = B::upload(std::span<const typename C::device_state>(&init, 1));
    }
  }

  /// States in `storage` (one element, owned by the caller and reused request after request:
  /// a stage keeps one per slot), initialised by `store(storage, initial_state)` — on a device
  /// backend a kernel queued on the stage's stream, so opening a branch neither allocates nor
  /// waits.
  template <class Store>
  BranchState(const C& chain, std::string name, const BranchInfo& info, device_buffer& storage,
              Store&& store)
      : BranchState(chain, std::move(name), info, &storage) {
    if constexpr (C::has_device_members) {
      BATON_CHECK(storage.size() >= 1, usage_error, "branch '", name_,
                  "': the interceptor state storage is empty");
      store(storage, chain.initial_device_state(with_name(info)));
    }
  }
  BranchState(const BranchState&) = delete;
  BranchState& operator=(const BranchState&) = delete;

  const std::string& name() const { return name_; }
  int index() const { return index_; }
  const typename C::device_params& params() const { return params_; }
  /// Replaces member K's params in this branch alone (a request's own stop strings fill the
  /// chain's absent RequestStops member: intercept/request_stops.hpp), before its first step.
  /// What they point at must outlive the branch.
  template <std::size_t K, class P>
  void set_member_params(const P& p) {
    pack_get<K>(params_) = p;
    own_params_ = true;
  }
  /// Whether set_member_params() gave this branch params of its own (a device member may be
  /// present here though the chain's is absent).
  bool has_own_params() const { return own_params_; }
  typename C::host_state& host() { return host_; }
  const typename C::host_state& host() const { return host_; }
  /// The device members' states in backend memory (empty when the chain has none).
  device_buffer& device() { return *device_; }
  const device_buffer& device() const { return *device_; }

  /// Host backends only: the device members' states, read where they live.
  typename C::device_state& device_on_host() requires(!B::is_device && C::has_device_members) {
    return device_->data()[0];
  }
  const typename C::device_state& device_on_host() const
      requires(!B::is_device && C::has_device_members) {
    return device_->data()[0];
  }
  /// Member K's state (host backends, either kind).
  template <std::size_t K>
  const auto& state() const requires(!B::is_device) {
    using I = std::remove_cvref_t<decltype(std::declval<const C&>().template member<K>())>;
    if constexpr (bool(I::graph_safe)) {
      return pack_get<K>(device_->data()[0]);
    } else {
      return std::get<K>(host_);
    }
  }

 private:
  BranchState(const C& chain, std::string name, const BranchInfo& info, device_buffer* storage)
      : name_(std::move(name)),
        index_(info.branch_index),
        params_(chain.params()),
        host_(chain.initial_host_state(with_name(info))),
        device_(storage ? storage : &owned_) {}

  BranchInfo with_name(BranchInfo info) const {
    info.branch = name_;
    return info;
  }

  std::string name_;
  int index_ = 0;
  typename C::device_params params_;
  bool own_params_ = false;
  typename C::host_state host_;
  device_buffer owned_;
  device_buffer* device_;
};

/// A request's branches. Each opens with fresh states; their addresses stay put while the
/// request lives (decoders hold them).
template <InterceptorChain C, Backend B>
class RequestState {
 public:
  using branch_type = BranchState<C, B>;

  /// Opens a branch named `name` for `chain`. Throws usage_error if the name is taken.
  /// `storage...`: optionally, the state buffer and its initialiser (BranchState's second
  /// constructor).
  template <class... Storage>
  branch_type& open(const C& chain, std::string name, std::string_view stage, int max_new,
                    Storage&&... storage) {
    BATON_CHECK(find(name) == nullptr, usage_error, "request: branch '", name, "' is already open");
    const BranchInfo info{stage, {}, static_cast<int>(branches_.size()), max_new};
    branches_.push_back(std::make_unique<branch_type>(chain, std::move(name), info,
                                                      std::forward<Storage>(storage)...));
    return *branches_.back();
  }
  int size() const { return static_cast<int>(branches_.size()); }
  branch_type& branch(int i) { return *branches_.at(static_cast<std::size_t>(i)); }
  const branch_type& branch(int i) const { return *branches_.at(static_cast<std::size_t>(i)); }
  /// The branch named `name`, or nullptr.
  const branch_type* find(std::string_view name) const {
    for (const auto& b : branches_)
      if (b->name() == name) return b.get();
    return nullptr;
  }

 private:
  std::vector<std::unique_ptr<branch_type>> branches_;
};

}  // namespace baton
