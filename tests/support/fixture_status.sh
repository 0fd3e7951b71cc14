# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
#
# Sourced by the ctest fixtures that run a reference implementation from PyPI
# (tokenizer/setup_reference.sh, grammar/setup_llguidance.sh). A fixture writes one line to
# its status file, which the check tests read (tests/support/reference_status.hpp):
#   ok             compare baton against the reference;
#   skip: REASON   the reference is unavailable: the checks exit 77 (ctest: Skipped);
#   fail: REASON   the checks fail.
# With CI=true an unavailable reference is a failure: CI can reach PyPI.
#   fixture_begin STATUS_FILE LABEL   (LABEL prefixes the messages, e.g. "reference tokenizers")
#   finish ok | finish skip|fail REASON   (exits: 1 for fail, else 0)

fixture_begin() {
  fixture_status=$1
  fixture_label=$2
  # Until finish runs, a fixture that dies half-way reads as a failure, never as a pass.
  echo "fail: setup started but did not finish" >"$fixture_status"
}

finish() {
  if [ "$1" = ok ]; then
    echo ok >"$fixture_status"
    exit 0
  fi
  local kind=$1
  [ "$kind" = skip ] && [ "${CI:-}" = true ] && kind=fail
  echo "$kind: $2" >"$fixture_status"
  echo "$fixture_label: $kind: $2"
  [ "$kind" = fail ] && exit 1
  exit 0
}
