"""vllm_gate_failure_message: the diagnosis first, then the ranks, the fabric, the stops and a tail cut to width.

The failed wait is made from a real lab log (fixtures/vllm/lab, a KV cache too small for the context) read by the
real parser, as vllm_wait reports it.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.gate_message import TAIL_WIDTH, FilterModule, vllm_gate_failure_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log_text
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_wait import quoted

LOG = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm" / "lab" / "0.32.0-kv-cache-insufficient.log.gz"
CONTEXT = {"head": "spark-1", "image": "sparkinfer-lab-vllm:latest", "container": "sparkinfer-vllm", "stage": "ready"}


def failed_wait() -> dict:
    text = gzip.decompress(LOG.read_bytes()).decode()
    facts = parse_vllm_log_text(text)
    error = facts["error"]
    return {
        "failed": True,
        "msg": f"vLLM failed ({facts['outcome']}): {quoted(error['line'])} -- {error['hint']}",
        "tail": text.splitlines()[-12:],
        "vllm_log": facts,
    }


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"vllm_gate_failure_message": vllm_gate_failure_message}


def test_the_diagnosis_comes_first_then_each_part_on_its_own_line_and_a_tail_cut_to_width():
    failure = failed_wait()
    follower_log = {**failure["vllm_log"], "outcome": "loading", "stage": "distributed_init", "error": None}
    message = vllm_gate_failure_message(
        failure,
        **CONTEXT,
        ranks=[{"item": "spark-2", "vllm_log": follower_log}],
        pings=[{"item": "spark-2", "rc": 1}],
        stopped=[{"item": "spark-1", "container": {}}, {"item": "spark-2", "msg": "Docker does not answer"}],
        addresses={"spark-1": "192.168.100.10", "spark-2": "192.168.100.11"},
    )
    lines = message.splitlines()
    assert lines[0] == f"vLLM on spark-1 (sparkinfer-lab-vllm:latest, container sparkinfer-vllm) did not reach ready: {failure['msg']}"
    assert "kv_cache_insufficient" in lines[0]
    assert lines[1:6] == [
        "Rank 1 on spark-2: loading at stage distributed_init.",
        "spark-1 -> spark-2 (192.168.100.11) does not answer over the fabric: the link between them is down or filtered "
        "(cable, switch port, firewall); mend it, then run the role again.",
        "The rank on spark-1 was stopped.",
        "The rank on spark-2 could not be stopped (Docker does not answer): stop it by hand.",
        "Their logs stay (docker logs sparkinfer-vllm on each rank); the next launch removes the stopped containers, "
        "and so does vllm_serve_state=absent (playbooks/teardown.yml).",
    ]
    assert lines[6] == f"Last 12 lines of the log on spark-1, each cut at {TAIL_WIDTH} characters:"
    tail = lines[7:]
    assert len(tail) == 12
    assert all(line.startswith("  ") and len(line) <= TAIL_WIDTH + 2 for line in tail)
    # The log's long lines are cut, the short ones kept whole.
    originals = failure["tail"]
    assert any(len(line) > TAIL_WIDTH for line in originals)
    for shown, original in zip(tail, originals):
        expected = original.rstrip() if len(original.rstrip()) <= TAIL_WIDTH else original.rstrip()[: TAIL_WIDTH - 3] + "..."
        assert shown == "  " + expected


def test_a_failed_follower_names_its_own_line_and_hint_and_a_rank_without_a_log_says_why():
    failure = failed_wait()
    message = vllm_gate_failure_message(
        failure,
        **CONTEXT,
        ranks=[{"item": "spark-2", "vllm_log": failure["vllm_log"]}, {"item": "spark-3", "msg": "no container sparkinfer-vllm"}],
        pings=[{"item": "spark-2", "rc": 0}],
        check_mode=True,
        stopped=[{"item": "spark-1", "container": {}}],
    )
    error = failure["vllm_log"]["error"]
    assert f"Rank 1 on spark-2: kv_cache_insufficient at stage {failure['vllm_log']['stage']}, {error['line']} -> {error['hint']}." in message
    assert "Rank 2 on spark-3: no container sparkinfer-vllm." in message
    assert "spark-1 -> spark-2 (?) answers over the fabric." in message
    assert "The rank on spark-1 would be stopped (check mode)." in message


def test_a_wait_without_a_tail_ends_with_where_the_logs_stay_and_a_result_of_another_type_is_refused():
    message = vllm_gate_failure_message({"msg": "vLLM did not reach ready within 1800 s"}, **CONTEXT)
    assert message.splitlines()[-1].startswith("Their logs stay")
    with pytest.raises(AnsibleFilterError, match="the failed wait's result must be a dictionary, got str"):
        vllm_gate_failure_message("failed", **CONTEXT)


def test_the_keywords_it_cannot_do_without_are_named_not_a_type_error():
    with pytest.raises(AnsibleFilterError, match=r"give image=\.\.\., stage=\.\.\. \(required: head, image, container, stage\)"):
        vllm_gate_failure_message({"msg": "x"}, head="spark-1", container="sparkinfer-vllm")
