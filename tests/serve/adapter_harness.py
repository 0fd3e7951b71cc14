# SPDX-FileCopyrightText: 2026 The baton authors
# SPDX-License-Identifier: MIT
"""What the adapter tests (test_serve_adapters.py) and the adapter load run
(benchmarks/serve/adapters_load.py) share: a `baton serve` process, the management endpoints
over urllib, /metrics through prometheus_client's own text parser, and the references: the same
request sent alone to a server started with that one adapter."""
import json
import os
import signal
import subprocess
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from serve_process import http_json, start_serve

KEY = "adapter-test-key"


class Server:
    def __init__(self, baton, *args, key=KEY):
        from openai import OpenAI
        self.proc, self.base = start_serve([baton, "serve", "--port", "0", "--threads", "1",
                                            "--api-key", key, *args])
        self.key = key
        self.client = OpenAI(base_url=self.base + "/v1", api_key=key, max_retries=0, timeout=300)

    def call(self, method, path, body=None, key=None):
        """(status, JSON body) of one request to `path`."""
        return http_json(method, self.base + path, body, self.key if key is None else key)

    def load(self, name, path):
        return self.call("POST", "/v1/load_lora_adapter", {"lora_name": name, "lora_path": path})

    def unload(self, name):
        return self.call("POST", "/v1/unload_lora_adapter", {"lora_name": name})

    def models(self):
        status, body = self.call("GET", "/v1/models")
        assert status == 200, body
        return {m["id"]: m for m in body["data"]}

    def metrics(self):
        """/metrics as {sample name: [(labels, value)]}, parsed by prometheus_client, and the
        families' types ({family name: type})."""
        req = urllib.request.Request(self.base + "/metrics",
                                     headers={"Authorization": f"Bearer {self.key}"})
        text = urllib.request.urlopen(req, timeout=60).read().decode()
        samples, types = {}, {}
        for fam in text_string_to_metric_families(text):
            types[fam.name] = fam.type
            for s in fam.samples:
                samples.setdefault(s.name, []).append((s.labels, s.value))
        return samples, types

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def value(samples, name, **labels):
    """The value of the sample `name` whose labels include `labels` (None when absent)."""
    for got, v in samples.get(name, []):
        if all(got.get(k) == w for k, w in labels.items()):
            return v
    return None


def names(label):
    """A comma-separated adapter list label as a set."""
    return set(n for n in label.split(",") if n)


def tokenize(baton, tokenizer, text):
    out = subprocess.run([baton, "tokenize", "--tokenizer", tokenizer, "--json"],
                         input=text.encode(), capture_output=True, check=True)
    return json.loads(out.stdout)


def complete(server, model, ids, max_tokens, **kw):
    """The text and finish reason of a completion of the ids `ids` on `model`."""
    r = server.client.completions.create(model=model, prompt=ids, max_tokens=max_tokens,
                                         temperature=0, **kw)
    return r.choices[0].text, r.choices[0].finish_reason


def references(baton, folder, adapters, requests, max_tokens, extra=()):
    """{(adapter, k): (text, finish)} for each (name, dir) of `adapters` and each id list in
    `requests`: each adapter on a server of its own (started with that adapter alone), each
    request sent alone."""
    out = {}
    for name, path in adapters:
        srv = Server(baton, "--model", folder, "--model-name", "ref-base", "--lora",
                     f"{name}={path}", "--concurrency", "1", *extra)
        try:
            for k, ids in enumerate(requests):
                out[(name, k)] = complete(srv, name, ids, max_tokens)
        finally:
            srv.stop()
    return out
