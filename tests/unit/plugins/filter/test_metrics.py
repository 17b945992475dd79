"""vLLM's /metrics, read by prometheus_client's parser and summed up, on real answers (module_utils/fixtures/vllm_metrics/SOURCES.md).

The expected values were read off each file by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter import metrics
from ansible_collections.sparkinfer.cluster.plugins.filter.metrics import prometheus_file_sd, vllm_metrics

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm_metrics"

# running, waiting, KV-cache usage (a fraction), prompt tokens, generation tokens
EXPECTED = {
    "lab-0.32.0-idle.txt": (0, 0, 0.0, 0, 0),
    "lab-0.32.0-requests-in-flight.txt": (1, 2, 6.103888176767214e-05, 15, 110),
    "lab-0.32.0-after-three-requests.txt": (0, 0, 0.0, 45, 1491),
    # Two engines: requests and tokens summed over them, the KV cache of the fuller one (engine 0's; engine 1's is
    # 0.0273972602739726).
    "lab-0.32.0-data-parallel-two-engines.txt": (2, 1, 0.11741682974559686, 6007, 3330),
    # vLLM's V0 engine names its KV-cache gauge gpu_cache_usage_perc and labels no engine.
    "public/public-v0-vllm-course-llama31-8b.txt": (0, 0, 0.0, 0, 0),
    "public/public-v0-aibrix-qwen25-coder-1p5b.txt": (0, 0, 0.0, 148, 955),
    # vllm:num_requests_waiting_by_reason (capacity, deferred) is not added to the requests waiting.
    "public/public-v1-gb10-derate-qwen3-0.6b.txt": (0, 0, 0.0, 68, 924),
}


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_figures_of_each_answer(name):
    summary = vllm_metrics(read(name))
    assert summary["problem"] == ""
    got = tuple(summary[key] for key in ("requests_running", "requests_waiting", "kv_cache_usage", "prompt_tokens", "generation_tokens"))
    assert got == EXPECTED[name]


def test_the_line_of_the_status_table():
    summary = vllm_metrics(read("lab-0.32.0-requests-in-flight.txt"))
    assert summary["line"] == "1 running, 2 waiting, KV cache 0.0% used, 15 prompt and 110 generated tokens since start"
    assert vllm_metrics(read("public/public-v0-aibrix-qwen25-coder-1p5b.txt"))["line"] == (
        "0 running, 0 waiting, KV cache 0.0% used, 148 prompt and 955 generated tokens since start"
    )
    # The fuller engine's 0.11741682974559686 of its KV cache, as a percentage.
    assert vllm_metrics(read("lab-0.32.0-data-parallel-two-engines.txt"))["line"] == (
        "2 running, 1 waiting, KV cache 11.7% used, 6007 prompt and 3330 generated tokens since start"
    )


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-Inf"])
def test_a_sample_that_is_not_a_finite_number_leaves_its_figure_unknown(value):
    # The lab's answer with its running requests' sample and KV-cache gauge set to a value the text format allows.
    text = read("lab-0.32.0-requests-in-flight.txt")
    text = re.sub(r"^(vllm:num_requests_running\{[^}]*\}) \S+$", rf"\1 {value}", text, flags=re.MULTILINE)
    text = re.sub(r"^(vllm:kv_cache_usage_perc\{[^}]*\}) \S+$", rf"\1 {value}", text, flags=re.MULTILINE)
    summary = vllm_metrics(text)
    assert (summary["requests_running"], summary["requests_waiting"], summary["kv_cache_usage"]) == (None, 2, None)
    assert summary["line"].startswith("? running, 2 waiting, KV cache ? used")


def test_ray_metrics_export_is_not_taken_for_vllm():
    summary = vllm_metrics(read("lab-ray-2.60.0-metrics-export.txt"))
    assert summary == {"problem": "the answer has no vllm: series (is it vLLM's /metrics?)"}


def test_an_answer_that_is_not_prometheus_text_is_a_problem():
    summary = vllm_metrics('{"object":"list","data":[]}')
    assert summary["problem"].startswith("the answer is not Prometheus' text format")


def test_without_prometheus_client_the_problem_says_what_to_install(monkeypatch):
    monkeypatch.setattr(metrics, "_text_parser", lambda: None)
    assert "pip install prometheus-client" in vllm_metrics(read("lab-0.32.0-idle.txt"))["problem"]


def test_a_non_string_is_refused():
    with pytest.raises(AnsibleFilterError, match="expected the text of a /metrics answer, got list"):
        vllm_metrics([])


def test_the_uri_result_that_asked_is_read_and_a_refusal_is_the_problem():
    # The shape of ansible.builtin.uri's result with return_content, and its msg as uri.py writes it ('Status code was %s
    # and not %s: %s', its request's own message after the colon).
    url = "http://192.168.183.11:8000/metrics"
    assert vllm_metrics({"status": 200, "url": url, "content": read("lab-0.32.0-idle.txt"), "msg": "OK (unknown bytes)"})["problem"] == ""
    unauthorized = {"status": 401, "url": url, "msg": "Status code was 401 and not [200]: HTTP Error 401: Unauthorized"}
    assert vllm_metrics(unauthorized) == {
        "problem": f"GET {url}: Status code was 401 and not [200]: HTTP Error 401: Unauthorized (the API key differs from the server's)"
    }
    assert vllm_metrics({"status": -1, "url": url}) == {"problem": f"GET {url}: no answer"}


def node(cluster: str, name: str, vllm_endpoint: str = "", ray_metrics: str = "") -> dict:
    return {"cluster": cluster, "node": name, "vllm_endpoint": vllm_endpoint, "ray_metrics": ray_metrics}


def test_the_targets_file_has_each_heads_api_and_each_ray_export_labelled_by_cluster_and_node():
    nodes = [
        node("spark-3", "spark-4", ray_metrics="10.0.0.4:6384"),
        node("spark-1", "spark-2"),
        node("spark-3", "spark-3", "https://10.0.0.3:8443/v1", "10.0.0.3:6384"),
        node("spark-1", "spark-1", "http://10.0.0.1:8000/v1"),
    ]
    assert prometheus_file_sd(nodes) == [
        {
            "targets": ["10.0.0.1:8000"],
            "labels": {
                "job": "sparkinfer-vllm",
                "__scheme__": "http",
                "__metrics_path__": "/metrics",
                "sparkinfer_cluster": "spark-1",
                "sparkinfer_node": "spark-1",
            },
        },
        {
            "targets": ["10.0.0.3:8443"],
            "labels": {
                "job": "sparkinfer-vllm",
                "__scheme__": "https",
                "__metrics_path__": "/metrics",
                "sparkinfer_cluster": "spark-3",
                "sparkinfer_node": "spark-3",
            },
        },
        {
            "targets": ["10.0.0.3:6384"],
            "labels": {"job": "sparkinfer-ray", "__metrics_path__": "/metrics", "sparkinfer_cluster": "spark-3", "sparkinfer_node": "spark-3"},
        },
        {
            "targets": ["10.0.0.4:6384"],
            "labels": {"job": "sparkinfer-ray", "__metrics_path__": "/metrics", "sparkinfer_cluster": "spark-3", "sparkinfer_node": "spark-4"},
        },
    ]


def test_no_endpoint_gives_an_empty_targets_file():
    assert prometheus_file_sd([node("spark-1", "spark-1"), node("spark-1", "spark-2")]) == []


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ([node("spark-1", "spark-1", "10.0.0.1:8000")], "spark-1: the vLLM endpoint '10.0.0.1:8000' is not an http(s) URL"),
        ([{"cluster": "spark-1", "node": "spark-1"}], "expected a list of mappings with the keys ['cluster', 'node', 'ray_metrics', 'vllm_endpoint']"),
        ("spark-1", "expected a list of mappings"),
    ],
)
def test_what_is_not_an_endpoint_is_refused(nodes, message):
    with pytest.raises(AnsibleFilterError, match=re.escape(message)):
        prometheus_file_sd(nodes)
