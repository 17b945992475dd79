"""The Ray status and node-list parsers and the node checks, on real outputs (provenance in fixtures/ray/SOURCES.md)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_cluster_facts import check_nodes, cluster_facts, lacking_resources, missing_nodes
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_hints import diagnose
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_nodes import parse_ray_nodes
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_status import parse_ray_status
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_text import RayStatusParseError, parse_quantity

FIXTURES = Path(__file__).parent / "fixtures" / "ray"
OUTPUTS = sorted(path for path in FIXTURES.iterdir() if path.name.endswith((".txt", ".json", ".txt.gz")) and ".expected." not in path.name)
GIB = 1 << 30


def read(path: Path) -> str:
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    return path.read_text(encoding="utf-8")


def fixture(name: str) -> str:
    return read(FIXTURES / name)


def sidecar(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".gz").rsplit(".", 1)[0] + ".expected.json")


def parsed(path: Path):
    text = read(path)
    try:
        if ".status" in path.name:
            return parse_ray_status(text).as_dict()
        return [node.as_dict() for node in parse_ray_nodes(text)]
    except RayStatusParseError as exc:
        found = diagnose(text)
        return {"parse_error": str(exc), "diagnosis": found[0] if found else None}


def facts(status: str | None = None, nodes: str | None = None, nodes_error: str | None = None) -> dict:
    return cluster_facts(
        parse_ray_status(fixture(status)) if status else None,
        parse_ray_nodes(fixture(nodes)) if nodes else None,
        nodes_error,
    )


def test_the_corpus_has_its_cases():
    assert len(OUTPUTS) >= 40
    assert {sidecar(path).name for path in OUTPUTS} == {path.name for path in FIXTURES.glob("*.expected.json")}
    sources = (FIXTURES / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"`{path.name}`" in sources for path in OUTPUTS)
    # Captured here and copied from public sources, both.
    assert any(path.name.startswith("2.60.0-") for path in OUTPUTS)
    assert any(path.name.startswith("2.x-") for path in OUTPUTS)


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda path: path.name)
def test_every_fixture_parses_to_its_sidecar(output):
    assert parsed(output) == json.loads(sidecar(output).read_text(encoding="utf-8"))


@pytest.mark.parametrize("output", [path for path in OUTPUTS if ".status" in path.name and "error" not in path.name], ids=lambda path: path.name)
def test_no_report_line_is_left_unread(output):
    assert parse_ray_status(read(output)).unparsed == []


# Read off each report by hand: sections naming nodes, nodes counted, GPUs in all, placement groups waiting.
STATUS_HEADLINES = {
    "2.60.0-head-only.status.txt": ("Active", 1, None, 0),
    "2.60.0-two-nodes.status.txt": ("Active", 2, None, 0),
    "2.60.0-two-nodes-gpu-demand.status.txt": ("Active", 2, None, 1),
    "2.60.0-worker-killed.status.txt": ("Active", 1, None, 0),
    "2.60.0-v2-two-gpu-nodes.status.txt": ("Idle", 2, 2.0, 0),
    "2.60.0-v2-two-gpu-nodes-placement-group.status.txt": ("Active", 2, 2.0, 0),
    "2.x-ngc-25.11-dgx-spark-pair.status.txt": ("Active", 2, 2.0, 0),
    "2.x-gpustack-two-nodes-one-gpu-pg-pending-unindented.status.txt": ("Active", 2, 1.0, 1),
    "2.36.0-aws-head-worker-pg-pending.status.txt": ("Active", 2, None, 1),
    "2.x-kuberay-gke-l4-placement-groups.status.txt": ("Healthy", 2, 3.0, 0),
    "2.x-legacy-healthy-tpu-pod.status.txt": ("Healthy", 5, None, 0),
    "2.x-legacy-pending-node-ips-excerpt.status.txt": ("Healthy", 1, None, 0),
    "2.x-legacy-verbose-node-ips-excerpt.status-v.txt": ("Healthy", 3, None, 0),
    "2.x-total-constraints-two-gpu-hosts.status.txt": ("Active", 2, 2.0, 0),
}


@pytest.mark.parametrize(("name", "headline"), STATUS_HEADLINES.items(), ids=list(STATUS_HEADLINES))
def test_headline_facts_of_each_report(name, headline):
    section, nodes, gpus, waiting = headline
    report = parse_ray_status(fixture(name))
    groups = report.active if section in ("Active", "Healthy") and report.active else report.idle
    assert section in report.sections
    assert sum(group.count for group in [*report.active, *report.idle]) == nodes
    assert groups
    assert (report.usage["GPU"].total if "GPU" in report.usage else None) == gpus
    assert len(report.placement_group_demands) == waiting


def test_the_three_forms_of_ray_list_nodes_agree():
    for case in ("head-only", "two-nodes", "worker-killed", "worker-rejoined", "worker-stopped", "v2-two-gpu-nodes"):
        forms = [parse_ray_nodes(fixture(f"2.60.0-{case}.{form}")) for form in ("nodes-json.json", "nodes-yaml.txt", "nodes-table.txt")]
        assert forms[0] == forms[1] == forms[2], case


def test_a_dead_worker_is_missing_with_the_reason_ray_gives():
    cluster = facts("2.60.0-worker-killed.status-v.txt", "2.60.0-worker-killed.nodes-json.json")
    assert (cluster["node_count"], cluster["alive_ips"], cluster["head_ip"], cluster["dead_nodes"]) == (1, ["127.0.0.2"], "127.0.0.2", 1)
    assert missing_nodes(["127.0.0.2", "127.0.0.3"], cluster) == ["127.0.0.3"]
    (dead,) = [node for node in cluster["nodes"] if node["state"] == "DEAD"]
    assert dead["state_message"] == "Unexpected termination: health check failed due to missing too many heartbeats"
    # ray status itself no longer lists the dead node, and reports no failure for it.
    assert cluster["failures"] == []


def test_demands_nobody_can_meet():
    cluster = facts("2.60.0-two-nodes-gpu-demand.status-v.txt", "2.60.0-two-nodes.nodes-json.json")
    assert cluster["demands"] == [{"bundle": {"CPU": 1.0, "GPU": 1.0}, "count": 1, "placement_group_count": None}]
    assert cluster["placement_group_demands"] == [{"bundles": [{"bundle": {"GPU": 1.0}, "count": 2}], "strategy": "SPREAD", "count": 1}]


def test_a_rejoined_worker_counts_although_its_dead_predecessor_is_still_listed():
    cluster = facts("2.60.0-worker-rejoined.status-v.txt", "2.60.0-worker-rejoined.nodes-json.json")
    assert (cluster["node_count"], cluster["dead_nodes"], cluster["alive_ips"]) == (2, 1, ["127.0.0.2", "127.0.0.3"])
    assert check_nodes(cluster, ["127.0.0.2", "127.0.0.3"], {"worker_marker": 1}).missing == []


def test_a_stopped_worker_is_dead_by_sigterm():
    cluster = facts("2.60.0-worker-stopped.status.txt", "2.60.0-worker-stopped.nodes-json.json")
    assert missing_nodes(["127.0.0.2", "127.0.0.3"], cluster) == ["127.0.0.3"]
    assert {node["state_message"] for node in cluster["nodes"] if node["state"] == "DEAD"} == {
        "Expected termination: received SIGTERM",
        "Unexpected termination: health check failed due to missing too many heartbeats",
    }


def test_two_gpu_nodes_meet_a_gpu_each_and_the_placed_group_reserves_them():
    cluster = facts("2.60.0-v2-two-gpu-nodes-placement-group.status-v.txt", "2.60.0-v2-two-gpu-nodes.nodes-json.json")
    check = check_nodes(cluster, ["127.0.0.2", "127.0.0.3"], {"GPU": 1})
    assert (check.missing, check.missing_count, check.lacking, check.ips_known) == ([], 0, [], True)
    assert cluster["usage"]["GPU"] == {"used": 0.0, "total": 2.0, "placement_group_used": 0.0, "placement_group_reserved": 2.0}
    assert {node["ip"]: node["activity"] for node in cluster["nodes"]} == {
        "127.0.0.2": ["Resource: GPU currently in use."],
        "127.0.0.3": ["Resource: GPU currently in use."],
    }


def test_nodes_without_gpus_lack_them_each():
    cluster = facts("2.60.0-two-nodes.status-v.txt", "2.60.0-two-nodes.nodes-json.json")
    lacking = lacking_resources(cluster, {"GPU": 1})
    assert [(lack["ip"], lack["resource"], lack["required"], lack["available"], lack["scope"]) for lack in lacking] == [
        ("127.0.0.3", "GPU", 1.0, 0.0, "node"),
        ("127.0.0.2", "GPU", 1.0, 0.0, "node"),
    ]
    assert lacking_resources(cluster, {"worker_marker": 1}, ["127.0.0.3"]) == []


def test_without_the_state_api_missing_nodes_are_counted_not_named():
    cluster = facts("2.60.0-no-dashboard-head-only.status-v.txt", nodes_error="the dashboard is off")
    assert (cluster["state_api"], cluster["state_api_error"], cluster["node_ips_known"]) == (False, "the dashboard is off", False)
    check = check_nodes(cluster, ["192.168.177.11", "192.168.177.12"])
    assert (check.missing, check.missing_count, check.ips_known) == ([], 1, False)
    # The verbose report still gives the node's own resources.
    (node,) = cluster["nodes"]
    assert (node["node_id"], node["ip"], node["resources"]["CPU"]) == ("f301dd54816c227b2867f25fdcec2bd2b54174996c13f3a63646e7d8", None, 2.0)


def test_a_spark_pair_from_the_plain_report_is_checked_on_the_cluster_totals():
    cluster = facts("2.x-ngc-25.11-dgx-spark-pair.status.txt")
    assert (cluster["node_count"], cluster["totals"]["GPU"], cluster["totals"]["CPU"]) == (2, 2.0, 40.0)
    assert [node["node_id"][:8] for node in cluster["nodes"]] == ["a81cfbad", "4e6d26d7"]
    assert check_nodes(cluster, ["192.168.177.11", "192.168.177.12"], {"GPU": 1}).lacking == []
    three = check_nodes(cluster, ["192.168.177.11", "192.168.177.12", "192.168.177.13"], {"GPU": 1})
    assert three.missing_count == 1
    assert three.lacking == [{"scope": "cluster", "node_id": None, "ip": None, "resource": "GPU", "required": 3.0, "available": 2.0}]


def test_a_gpu_seen_as_tpu_leaves_the_pair_one_gpu_short():
    cluster = facts("2.x-gpustack-two-nodes-one-gpu-pg-pending-unindented.status.txt")
    assert (cluster["node_count"], cluster["totals"]["GPU"], cluster["totals"]["TPU"]) == (2, 1.0, 1.0)
    assert [lack["available"] for lack in lacking_resources(cluster, {"GPU": 1})] == [1.0]
    assert cluster["placement_group_demands"] == [{"bundles": [{"bundle": {"GPU": 1.0}, "count": 2}], "strategy": "PACK", "count": 1}]


def test_old_reports_name_nodes_by_ip():
    cluster = facts("2.x-legacy-verbose-node-ips-excerpt.status-v.txt")
    assert (cluster["node_count"], cluster["node_ips_known"]) == (3, True)
    assert [(node["ip"], node["node_type"]) for node in cluster["nodes"]] == [
        ("10.0.3.87", "ray.head.default"),
        ("10.0.2.228", "ray.worker.default"),
        ("10.0.2.207", "ray.worker.default"),
    ]
    assert missing_nodes(["10.0.3.87", "10.0.2.228", "10.0.2.9"], cluster) == ["10.0.2.9"]
    report = parse_ray_status(fixture("2.x-legacy-verbose-node-ips-excerpt.status-v.txt"))
    assert [node.is_idle for node in report.node_reports] == [False, False, None]


def test_pending_nodes_of_an_autoscaler_are_not_alive():
    cluster = facts("2.x-legacy-pending-node-ips-excerpt.status.txt")
    assert cluster["node_count"] == 1
    assert [(node["address"], node["status"]) for node in cluster["pending_nodes"]] == [
        ("172.30.0.37", "uninitialized"),
        ("172.30.0.67", "uninitialized"),
        ("172.30.0.50", "uninitialized"),
    ]
    assert cluster["usage"]["memory"] == {"used": 2 * GIB, "total": round(8.886 * GIB), "placement_group_used": None, "placement_group_reserved": None}


def test_kuberay_node_table_gives_ips_head_and_gpus():
    cluster = facts("2.x-kuberay-gke-l4-placement-groups.status.txt", "2.x-kuberay-gke-l4.nodes-table.txt")
    assert (cluster["node_count"], cluster["head_ip"], cluster["alive_ips"]) == (2, "10.92.0.10", ["10.92.0.10", "10.92.0.11"])
    assert [node["resources"]["GPU"] for node in cluster["nodes"]] == [2.0, 1.0]
    assert lacking_resources(cluster, {"GPU": 2}, ["10.92.0.11"])[0]["ip"] == "10.92.0.11"
    assert cluster["usage"]["GPU"] == {"used": 1.0, "total": 3.0, "placement_group_used": 1.0, "placement_group_reserved": 1.0}


def test_log_lines_before_the_report_are_skipped():
    report = parse_ray_status(fixture("2.x-total-constraints-two-gpu-hosts.status.txt"))
    assert report.timestamp == "2025-05-09 05:39:16.967610"
    assert report.sections[-2:] == ["Total Constraints", "Total Demands"]


@pytest.mark.parametrize(
    ("name", "diagnosis"),
    [
        ("2.60.0-not-running.status-error.txt", "gcs_unreachable"),
        ("2.60.0-no-dashboard.nodes-error.txt", "state_api_unavailable"),
        ("docker-28.2.2-no-ray-in-image.status-error.txt.gz", "ray_missing"),
        ("docker-28.2.2-container-stopped.status-error.txt", "container_stopped"),
        ("docker-28.2.2-no-such-container.status-error.txt", "no_container"),
    ],
)
def test_failures_are_diagnosed(name, diagnosis):
    found = diagnose(fixture(name))
    assert found is not None and found[0] == diagnosis
    parse = parse_ray_nodes if "nodes" in name else parse_ray_status
    with pytest.raises(RayStatusParseError):
        parse(fixture(name))


def test_a_docker_daemon_that_does_not_answer_is_diagnosed():
    found = diagnose("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
    assert found is not None and found[0] == "docker_daemon"
    assert diagnose("something else entirely") is None


# ---------------------------------------------------------------------------------------------
# Edge cases


def test_no_cluster_status_yet_is_a_report_with_no_nodes():
    report = parse_ray_status("No cluster status. It may take a few seconds for the Ray internal services to start up.\n")
    assert (report.available, report.message) == (False, "No cluster status. It may take a few seconds for the Ray internal services to start up.")
    cluster = cluster_facts(report)
    assert (cluster["available"], cluster["node_count"]) == (False, 0)
    assert missing_nodes(["192.168.177.11"], cluster) == ["192.168.177.11"]


@pytest.mark.parametrize("text", ["", "\n\n", "ray: command not found\n", "Traceback (most recent call last):\n  boom\n"])
def test_text_without_a_report_raises(text):
    with pytest.raises(RayStatusParseError, match="no `ray status` report"):
        parse_ray_status(text)


# The lines Ray's own formatter tests expect (ray-project/ray python/ray/autoscaler/v2/tests/test_utils.py
# and python/ray/tests/test_autoscaler.py), for the sections the captured clusters never filled.
FORMATTER_LINES = """======== Autoscaler status: 2020-12-28 01:02:03 ========
Node status
--------------------------------------------------------
Active:
 2 p3.2xlarge
 20 m4.4xlarge
Idle:
 (no idle nodes)
Pending:
 m4.4xlarge, 2 launching
 1.2.3.4: m4.4xlarge, waiting-for-ssh
Recent failures:
 worker_node: LaunchFailed (latest_attempt: 02:46:40) - Insufficient capacity
 worker_node: NodeTerminated (instance_id: instance5)
 p3.2xlarge: NodeTerminated (ip: 1.2.3.6)

Resources
--------------------------------------------------------
Usage:
 0/2 AcceleratorType:V100
 530.0/544.0 CPU
 2.00GiB/8.00GiB memory
 5.42KiB/10.04KiB object_store_memory

Demands:
 {'CPU': 1, 'GPU': 1}: 11+ pending tasks/actors (4+ using placement groups)
 {'CPU': 1, 'GPU': 1} * 1 (STRICT_SPREAD): 1+ pending placement groups
 {'CPU': 4} * 5, {'GPU': 1} * 2 (PACK): 420+ pending placement groups
 {'CPU': 16}: 100+ from request_resources()

Node: instance1 (head_node)
 Id: fffffffffffffffffffffffffffffffffffffffffffffffffff00001
 Usage:
  0.5/1.0 CPU
  0.0/2.0 GPU
 Activity:
  (no activity)
"""


def test_every_section_of_the_formatter():
    report = parse_ray_status(FORMATTER_LINES)
    assert report.unparsed == []
    assert [(group.count, group.node_type) for group in report.active] == [(2, "p3.2xlarge"), (20, "m4.4xlarge")]
    assert [(launch.node_type, launch.count) for launch in report.pending_launches] == [("m4.4xlarge", 2)]
    assert [(node.address, node.status) for node in report.pending_nodes] == [("1.2.3.4", "waiting-for-ssh")]
    assert [(failure.category, failure.ip, failure.instance_id, failure.latest_attempt, failure.details) for failure in report.failures] == [
        ("LaunchFailed", None, None, "02:46:40", "Insufficient capacity"),
        ("NodeTerminated", None, "instance5", None, None),
        ("NodeTerminated", "1.2.3.6", None, None, None),
    ]
    assert report.usage["memory"].used == 2 * GIB
    assert report.usage["object_store_memory"].total == round(10.04 * 1024)
    assert report.usage["AcceleratorType:V100"].total == 2.0
    assert [(demand.bundle, demand.count, demand.placement_group_count) for demand in report.demands] == [({"CPU": 1.0, "GPU": 1.0}, 11, 4)]
    assert [(group.strategy, group.count, group.bundles) for group in report.placement_group_demands] == [
        ("STRICT_SPREAD", 1, [{"bundle": {"CPU": 1.0, "GPU": 1.0}, "count": 1}]),
        ("PACK", 420, [{"bundle": {"CPU": 4.0}, "count": 5}, {"bundle": {"GPU": 1.0}, "count": 2}]),
    ]
    assert [(request.bundle, request.count) for request in report.resource_requests] == [({"CPU": 16.0}, 100)]
    (node,) = report.node_reports
    assert (node.instance_id, node.node_type, node.node_id, node.activity) == ("instance1", "head_node", "f" * 51 + "00001", [])


def test_lines_the_parser_does_not_know_are_kept_not_dropped():
    report = parse_ray_status("======== Autoscaler status: now ========\nActive:\n 1 node_a\nsomething new\nResources\nTotal Usage:\n a lot of CPU\n")
    assert report.unparsed == ["something new", "a lot of CPU"]


@pytest.mark.parametrize(
    ("text", "resource", "unit", "value"),
    [
        ("2.0", "CPU", None, 2.0),
        ("0B", "memory", None, 0),
        ("16.07GiB", "memory", None, round(16.07 * GIB)),
        ("16.071 GiB", "memory", None, round(16.071 * GIB)),
        ("936.219", "memory", "GiB", round(936.219 * GIB)),
        ("1013.52MiB", "object_store_memory", None, round(1013.52 * (1 << 20))),
        ("88B", "object_store_memory", None, 88),
        ("8589934592.0", "gpu_memory", None, 8589934592.0),
        ("0.010000000000000018", "accelerator_type_l4", None, 0.010000000000000018),
        ("1e-3", "CPU", None, 0.001),
    ],
)
def test_quantities(text, resource, unit, value):
    assert parse_quantity(text, resource, unit) == value


def test_a_quantity_that_is_not_one_raises():
    with pytest.raises(RayStatusParseError, match="not a resource quantity"):
        parse_quantity("lots", "CPU")


def test_json_after_a_warning_line_and_numbers_for_memory():
    text = (
        "WARNING: a state API warning\n"
        '[{"node_id": "n1", "node_ip": "10.0.0.1", "is_head_node": null, "state": "ALIVE",'
        ' "resources_total": {"memory": 1073741824, "node:__internal_head__": 1.0}}]'
    )
    (node,) = parse_ray_nodes(text)
    assert (node.ip, node.is_head, node.resources, node.state_message, node.labels) == ("10.0.0.1", True, {"memory": GIB}, None, {})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[{broken", "does not parse"),
        ('{"node_id": "x"}\n', "no node list"),
        ('[{"node_ip": "10.0.0.1"}]', "not a node of `ray list nodes`"),
        ("---\n-   node_id: x\n            too_deep: 1\n", "unexpected indentation"),
        ("---\n-   node_id: x\n    state: 'never closed\n", "ends inside a quoted string"),
        ("---\nnot yaml at all\n", "not a `ray list nodes` YAML line"),
        ("Usage: ray list [OPTIONS]\n\nError: Failed to make request to http://127.0.0.1:8265/api/v0/nodes.\n", "Error: Failed to make request"),
    ],
)
def test_node_lists_that_do_not_parse(text, message):
    with pytest.raises(RayStatusParseError, match=message):
        parse_ray_nodes(text)


def test_yaml_quoted_strings_fold_and_unquote():
    text = "---\n-   node_id: x\n    state: DEAD\n    state_message: 'it''s a long\n        message'\n    node_ip: \"10.0.0.9\"\n    is_head_node: false\n...\n"
    (node,) = parse_ray_nodes(text)
    assert (node.state_message, node.ip, node.is_head) == ("it's a long message", "10.0.0.9", False)


def test_required_memory_is_in_bytes():
    cluster = facts("2.60.0-v2-two-gpu-nodes.status-v.txt", "2.60.0-v2-two-gpu-nodes.nodes-json.json")
    # 15.670 GiB and 15.798 GiB, as `ray list nodes` prints them.
    assert lacking_resources(cluster, {"memory": 15 * GIB}) == []
    assert [lack["ip"] for lack in lacking_resources(cluster, {"memory": 15.7 * GIB})] == ["127.0.0.3"]


def test_facts_from_the_node_list_alone_sum_the_alive_nodes():
    cluster = facts(nodes="2.60.0-worker-rejoined.nodes-json.json")
    assert (cluster["available"], cluster["timestamp"], cluster["node_count"]) == (True, None, 2)
    assert cluster["totals"]["CPU"] == 3.0
    assert cluster["usage"]["CPU"]["used"] is None


# --- input of unexpected types: named errors, not tracebacks --------------------------------------------
# The node lists and report lines below are synthetic: a real node entry (as in test_json_after_a_warning_line...)
# with one field given another type, to exercise the parser's refusals. None of them is captured output.

_NODE = {"node_id": "n1", "node_ip": "10.0.0.1", "is_head_node": False, "state": "ALIVE", "resources_total": {"CPU": 2.0}, "labels": {}}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("resources_total", [["CPU", 2.0]], "resources_total as list [['CPU', 2.0]], not a mapping"),
        ("resources_total", "CPU: 2", "resources_total as str 'CPU: 2', not a mapping"),
        ("resources_total", {"CPU": {"total": 2}}, "gives resource CPU as dict {'total': 2}, not a number"),
        ("resources_total", {"CPU": True}, "gives resource CPU as bool True, not a number"),
        ("resources_total", {"CPU": "two"}, "not a resource quantity: 'two'"),
        ("resources_total", {"memory": 10**400}, "resource memory is not a finite number"),
        ("resources_total", {"memory": float("nan")}, "resource memory is not a finite number"),
        ("labels", ["ray.io/node_id"], "labels as list ['ray.io/node_id'], not a mapping"),
        ("is_head_node", "false", "is_head_node as str 'false', not true or false"),
        ("node_ip", 167772161, "node_ip as int 167772161, not a string"),
        ("node_id", ["n1"], "node_id as list"),
        ("state", None, "state as NoneType None, not a string"),
        ("state_message", {"text": "x"}, "state_message as dict"),
        ("node_name", 7, "node_name as int 7, not a string"),
    ],
)
def test_json_node_lists_of_unexpected_types_raise_a_parse_error(field, value, message):
    text = json.dumps([{**_NODE, field: value}])
    with pytest.raises(RayStatusParseError, match=re.escape(message)):
        parse_ray_nodes(text)


def test_json_infinity_is_not_a_resource():
    with pytest.raises(RayStatusParseError, match="not a finite number"):
        parse_ray_nodes('[{"node_id": "n1", "state": "ALIVE", "resources_total": {"GPU": Infinity}}]')


def test_a_yaml_node_list_with_a_broken_double_quoted_string_raises_a_parse_error():
    with pytest.raises(RayStatusParseError, match="not a quoted YAML string"):
        parse_ray_nodes('---\n-   node_id: x\n    state: ALIVE\n    node_name: "bad \\q escape"\n')


def test_a_yaml_node_list_with_a_scalar_for_its_resources_raises_a_parse_error():
    with pytest.raises(RayStatusParseError, match="resources_total as int 5, not a mapping"):
        parse_ray_nodes("---\n-   node_id: x\n    state: ALIVE\n    resources_total: 5\n")


@pytest.mark.parametrize("text", ["1e400", "1e400GiB", "-1e999"])
def test_a_quantity_past_the_float_range_raises(text):
    with pytest.raises(RayStatusParseError, match="not a finite resource quantity"):
        parse_quantity(text, "memory")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{'GPU': 'one'}: 1+ pending tasks/actors", "gives 'GPU' as str 'one', not a number"),
        ("{'GPU': [1]}: 1+ pending tasks/actors", "gives 'GPU' as list [1], not a number"),
        ("{'GPU': 1e400}: 1+ pending tasks/actors", "is not a finite number"),
        ("{'GPU': 1} * 2 (PACK): 1+ pending placement groups", None),
        ("{'GPU': None} * 2 (PACK): 1+ pending placement groups", "gives 'GPU' as NoneType None, not a number"),
        ("{'CPU': 1, **x}: 1+ from request_resources()", "not a resource bundle"),
    ],
)
def test_demand_bundles_of_unexpected_types_raise_a_parse_error(line, message):
    report = "======== Autoscaler status: 2026-12-02 18:28:13.724197 ========\nDemands:\n" + line + "\n"
    if message is None:
        assert parse_ray_status(report).placement_group_demands[0].bundles == [{"bundle": {"GPU": 1.0}, "count": 2}]
        return
    with pytest.raises(RayStatusParseError, match=re.escape(message)):
        parse_ray_status(report)


def test_a_usage_figure_past_the_float_range_is_left_unread_not_raised():
    report = "======== Autoscaler status: 2026-12-02 18:28:13.724197 ========\nUsage:\n 0B/1e400GiB memory\n"
    assert parse_ray_status(report).unparsed == ["0B/1e400GiB memory"]
