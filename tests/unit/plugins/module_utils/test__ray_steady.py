"""ray_cluster's Verify decisions on the head's real readings (fixtures/ray: a healthy pair of GPU nodes, and the same
kind of pair after its worker's container was killed, its raylet DEAD) and each node's raylet."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.ray_steady import FilterModule, ray_cluster_not_alive, ray_cluster_steady
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_cluster_facts import cluster_facts
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_nodes import parse_ray_nodes
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_status import parse_ray_status

FIXTURES = Path(__file__).parent / "fixtures" / "ray"
# The node ids in the readings below, read off their nodes-json files.
PAIR_HEAD, PAIR_WORKER = "6f2022279f2918a26c7c8facd0b66f91e1b285f38a1ab0632ec2f1d0", "522e471c42328a5d72992b46bcb971cf2def1a7e2330e5107ef082a0"
KILLED_HEAD, KILLED_WORKER = "9cf423774874bf1648c1114fdad9f290243e79054aa18eea9ac9a16a", "73e9a41ff32ce3b5dc0234d86071c2e0b5c2abc8c7384ebc2c393fa0"


def facts(case: str) -> dict:
    status = parse_ray_status((FIXTURES / f"2.60.0-{case}.status-v.txt").read_text(encoding="utf-8"))
    nodes = parse_ray_nodes((FIXTURES / f"2.60.0-{case}.nodes-json.json").read_text(encoding="utf-8"))
    return cluster_facts(status, nodes)


def probe(case: str, problems=()) -> dict:
    return {"changed": False, "ray_cluster": facts(case), "problems": list(problems)}


def node(before: str, restarted: bool = False) -> dict:
    return {"__ray_cluster_worker_container": {"changed": restarted}, "__ray_cluster_node_id_before": before}


STEADY_PAIR = [node(PAIR_HEAD), node(PAIR_WORKER)]


def test_the_filters_are_registered():
    assert FilterModule().filters() == {"ray_cluster_steady": ray_cluster_steady, "ray_cluster_not_alive": ray_cluster_not_alive}


def test_a_rerun_that_restarted_nothing_takes_the_heads_reading_as_the_verification():
    assert ray_cluster_steady(STEADY_PAIR, probe("v2-two-gpu-nodes"), 2, True) is True


@pytest.mark.parametrize(
    ("nodes", "reading", "gpus", "complete"),
    [
        pytest.param(STEADY_PAIR, probe("v2-two-gpu-nodes"), 2, False, id="a node failed before"),
        pytest.param([node(PAIR_HEAD), node(PAIR_WORKER, restarted=True)], probe("v2-two-gpu-nodes"), 2, True, id="a container restarted"),
        pytest.param(
            [{"__ray_cluster_head_container": {"changed": True}, "__ray_cluster_node_id_before": PAIR_HEAD}, node(PAIR_WORKER)],
            probe("v2-two-gpu-nodes"),
            2,
            True,
            id="the head restarted",
        ),
        pytest.param(STEADY_PAIR, {"skipped": True}, 2, True, id="no reading"),
        pytest.param(STEADY_PAIR, {**probe("v2-two-gpu-nodes"), "failed": True}, 2, True, id="the reading failed"),
        pytest.param(STEADY_PAIR, probe("v2-two-gpu-nodes", ["a node is missing"]), 2, True, id="the reading has a problem"),
        pytest.param(STEADY_PAIR, probe("v2-two-gpu-nodes"), 3, True, id="fewer GPUs than needed"),
        pytest.param([node(PAIR_HEAD), node("")], probe("v2-two-gpu-nodes"), 2, True, id="a raylet unknown before"),
        pytest.param([node(KILLED_HEAD), node(KILLED_WORKER)], probe("worker-killed"), 1, True, id="a raylet DEAD in the reading"),
    ],
)
def test_anything_else_is_verified_again(nodes, reading, gpus, complete):
    assert ray_cluster_steady(nodes, reading, gpus, complete) is False


def test_the_hosts_whose_own_raylet_is_not_alive_are_named_in_order():
    raylets = {"spark-a": KILLED_HEAD, "spark-b": KILLED_WORKER}
    assert ray_cluster_not_alive(raylets, facts("worker-killed")) == ["spark-b"]
    assert ray_cluster_not_alive({"spark-a": PAIR_HEAD, "spark-b": PAIR_WORKER}, facts("v2-two-gpu-nodes")) == []
    assert ray_cluster_not_alive(raylets, {}) == ["spark-a", "spark-b"]


def test_what_is_not_nodes_a_gpu_count_or_raylets_is_refused():
    with pytest.raises(AnsibleFilterError, match="ray_cluster_steady: expected each node's variables"):
        ray_cluster_steady({"spark-a": {}}, {}, 2, True)
    with pytest.raises(AnsibleFilterError, match="ray_cluster_steady: gpus_needed must be a number"):
        ray_cluster_steady(STEADY_PAIR, {}, "two", True)
    with pytest.raises(AnsibleFilterError, match="ray_cluster_not_alive: expected"):
        ray_cluster_not_alive([PAIR_HEAD], {})
