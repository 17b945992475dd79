"""The vLLM log parser over the whole corpus of real logs (fixtures/vllm/*/).

Each <stem>.log has <stem>.source.json (where it came from: a public URL, or the capture script
that ran real vLLM) and <stem>.expected.json (the facts a reader finds in it; the error's hint is
the parser's own advice and is not part of the oracle).
"""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import (
    FAILURE_OUTCOMES,
    STAGES,
    parse_vllm_log,
)

from .corpus import CORPUS, FACT_KEYS, LOGS, lines, sidecar, stem, text


def parsed(log) -> dict:
    return parse_vllm_log(lines(log))


def test_corpus_is_large_and_mostly_real_runs():
    public = [log for log in LOGS if log.parent.name == "public"]
    captured = [log for log in LOGS if log.parent.name == "lab"]
    assert len(LOGS) >= 115
    assert len(captured) >= 21
    assert len(public) >= 94


@pytest.mark.parametrize("log", LOGS, ids=lambda path: f"{path.parent.name}/{stem(path)}")
def test_log_has_provenance(log):
    source = sidecar(log, "source")
    if log.parent.name == "public":
        assert source["url"].startswith("https://")
    else:
        assert source["source"] == "captured"
        assert source["script"] == "lab/vllm-capture/capture.sh"


@pytest.mark.parametrize("log", LOGS, ids=lambda path: f"{path.parent.name}/{stem(path)}")
def test_facts_match_what_the_log_says(log):
    expected = sidecar(log, "expected")
    got = parsed(log)
    assert list(got) == list(FACT_KEYS)
    if got["error"] is not None:
        assert got["error"]["hint"]
        got["error"] = {key: got["error"][key] for key in ("category", "line")}
    assert got == expected


@pytest.mark.parametrize("log", LOGS, ids=lambda path: f"{path.parent.name}/{stem(path)}")
def test_facts_are_consistent(log):
    got = parsed(log)
    assert got["stage"] is None or got["stage"] in STAGES
    if got["outcome"] in FAILURE_OUTCOMES:
        assert got["error"]["category"] == got["outcome"]
        assert got["error"]["line"] in text(log)
    else:
        assert got["error"] is None
        assert got["outcome"] == ("ready" if got["stage"] == "ready" else "loading")


@pytest.mark.parametrize(
    ("name", "seconds", "specs"),
    [
        ("unknown-qwen3-0.6b-pg-wait-enginecore", "150", "[{'GPU': 1.0}, {'GPU': 1.0}]"),
        ("unknown-unknown-pg-wait-v0-log-format", "10", "[{'node:10.163.194.101': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]"),
    ],
)
def test_a_placement_wait_fails_at_once_naming_the_wait_and_the_bundles(name, seconds, specs):
    # vLLM prints the wait every few seconds up to its own 1800 s timeout: the first one is already the diagnosis.
    got = parsed(CORPUS / "public" / f"{name}.log")
    assert got["outcome"] == "ray_placement_timeout"
    assert f"Ray has waited {seconds} s to place the workers ({specs})" in got["error"]["hint"]


@pytest.mark.parametrize(
    ("name", "tokens"),
    [
        ("unknown-unknown-tpu-v5e-8-v1-estimated-max-model-len-5632", "5632"),  # V1: "the estimated maximum model length is 5632"
        ("unknown-llama3.1-8b-rtx3090-v0-max-seq-len-29000-kv-cache-23648", "23648"),  # V0: "can be stored in KV cache (23648)"
    ],
)
def test_a_kv_cache_too_small_names_the_length_that_fits(name, tokens):
    got = parsed(CORPUS / "public" / f"{name}.log")
    assert got["outcome"] == "kv_cache_insufficient"
    assert f"The KV cache holds at most {tokens} tokens: set --max-model-len {tokens} or lower" in got["error"]["hint"]


@pytest.mark.parametrize("name", ["0.32.0-unsupported-architecture", "0.32.0-restart-after-failure", "0.32.0-engine-crash-head-dim-16"])
def test_a_captured_log_cut_only_at_line_feeds_gives_the_facts_a_person_read(name):
    # docker's raw stream, cut at "\n" alone: the carriage returns vLLM wrote stay in the lines (its banner's lines end
    # with "\r\n", its progress bars redraw with "\r").
    log = CORPUS / "lab" / f"{name}.log.gz"
    raw = text(log).split("\n")
    assert any(line.endswith("\r") for line in raw)
    got = parse_vllm_log(raw)
    got["error"] = {key: got["error"][key] for key in ("category", "line")} if got["error"] is not None else None
    assert got == sidecar(log, "expected")
