# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""Python threads: the GIL is released while the engine computes, two relays run at once, and
one relay shared by two threads serves them one at a time, every result correct."""
import os
import threading
import time

import baton
from test_relay import EARLY_PASS, SECOND_CYCLE, heldout_questions, runs_of


def run_in_threads(jobs):
    """Runs each job in its own thread; returns their results (or raises the first error)."""
    results, errors = [None] * len(jobs), []

    def work(k):
        try:
            results[k] = jobs[k]()
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
        assert not t.is_alive(), "a relay thread did not finish"
    if errors:
        raise errors[0]
    return results


def test_two_threads_run_two_relays_at_once(demo):
    path = os.path.join(demo, "relay.json")
    questions = heldout_questions(demo, 6)
    a, b = baton.Relay.from_file(path, threads=1), baton.Relay.from_file(path, threads=1)
    expected = [runs_of(baton.Relay.from_file(path).run(q)) for q in questions]
    got = run_in_threads([lambda: [runs_of(a.run(q)) for q in questions],
                          lambda: [runs_of(b.run(q)) for q in reversed(questions)]])
    assert got[0] == expected
    assert got[1] == expected[::-1]


def test_two_threads_share_one_relay(demo_relay_shared):
    relay = demo_relay_shared
    expected = {q: runs_of(relay.run(q)) for q in (EARLY_PASS, SECOND_CYCLE)}
    got = run_in_threads([lambda: [runs_of(relay.run(EARLY_PASS)) for _ in range(5)],
                          lambda: [runs_of(relay.run(SECOND_CYCLE)) for _ in range(5)],
                          lambda: [runs_of(r) for r in relay.run_many([SECOND_CYCLE] * 3)]])
    assert got[0] == [expected[EARLY_PASS]] * 5
    assert got[1] == [expected[SECOND_CYCLE]] * 5
    assert got[2] == [expected[SECOND_CYCLE]] * 3


def test_the_gil_is_released_while_a_relay_runs(demo):
    """While one thread is inside run_many, the main thread keeps running Python code: with the
    GIL held through the call it could not run at all until the call returned."""
    relay = baton.Relay.from_file(os.path.join(demo, "relay.json"), slots=2, threads=1)
    questions = heldout_questions(demo, 24)
    inside = threading.Event()
    done = threading.Event()

    def work():
        inside.set()
        relay.run_many(questions, concurrency=2)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    inside.wait()
    ticks, started = 0, time.monotonic()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    took = time.monotonic() - started
    t.join()
    assert took > 0.2, f"run_many took only {took:.3f} s: too short to tell"
    assert ticks > 0.25 * took / 0.0011, f"{ticks} ticks in {took:.2f} s: the GIL was held"


def test_two_threads_generate_on_one_model(golden):
    m = baton.Model(os.path.join(golden, "qwen-c"))
    prompts = [[1, 2, 3], [100, 200, 300, 7]]
    expected = [m.generate(p, max_new=20, ignore_eos=True).ids for p in prompts]
    got = run_in_threads([lambda p=p: [m.generate(p, max_new=20, ignore_eos=True).ids
                                       for _ in range(4)] for p in prompts])
    assert got == [[e] * 4 for e in expected]


def test_two_threads_share_one_stream(demo_relay_shared):
    relay = demo_relay_shared
    expected = relay.run(SECOND_CYCLE)
    stream = relay.stream(SECOND_CYCLE)
    got = run_in_threads([lambda: [(t.stage, t.cycle, t.id) for t in stream]] * 2)
    # Each token went to one thread, in order within each thread's share.
    assert sorted(got[0] + got[1]) == sorted(
        (r.name, r.cycle, i) for r in expected.runs for i in r.ids)
    assert runs_of(stream.result) == runs_of(expected)
