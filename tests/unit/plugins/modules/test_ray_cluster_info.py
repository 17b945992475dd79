"""ray_cluster_info end to end in-process: real `ray status` / `ray list nodes` / `docker exec` outputs (fixtures/ray/SOURCES.md)."""

from __future__ import annotations

import gzip
from pathlib import Path
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.sparkinfer.cluster.plugins.modules import ray_cluster_info

from .module_harness import FakeCommands, ModuleFail, RecordingCommands, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "ray"
DOCKER = "/usr/bin/docker"
TIMEOUT = "/usr/bin/timeout"
BOUND = (TIMEOUT, "--kill-after=10", "120")
EXEC = (*BOUND, DOCKER, "exec", "-e", "LC_ALL=C", "ray-head", "ray")
STATUS = (*EXEC, "status", "-v")
NODES = (*EXEC, "list", "nodes", "--format", "json")
SPARKS = ["127.0.0.2", "127.0.0.3"]
CHECK_WORKER = "check its ray container logs, the fabric, and that RAY_NODE_IP_ADDRESS is its fabric address"


def fixture(name: str) -> str:
    path = FIXTURES / name
    if path.suffix == ".gz":
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    return path.read_text(encoding="utf-8")


def cluster(case: str, nodes: str | None = None) -> FakeCommands:
    """`ray status -v` and `ray list nodes` of one captured case."""
    return FakeCommands(
        {
            STATUS: (0, fixture(f"2.60.0-{case}.status-v.txt"), ""),
            NODES: (0, fixture(f"2.60.0-{nodes or case}.nodes-json.json"), ""),
        }
    )


@pytest.mark.parametrize("check_mode", [False, True])
def test_two_gpu_nodes_pass_and_return_the_cluster(check_mode):
    commands = RecordingCommands(cluster("v2-two-gpu-nodes").answers)
    args = {"container": "ray-head", "expected_nodes": SPARKS, "required_resources": {"GPU": 1}, "_ansible_check_mode": check_mode}
    result = run_module(ray_cluster_info.main, args, commands)
    facts = result["ray_cluster"]
    assert result["changed"] is False
    assert (result["missing_nodes"], result["missing_node_count"], result["lacking_resources"], result["problems"]) == ([], 0, [], [])
    assert (facts["node_count"], facts["alive_ips"], facts["head_ip"], facts["totals"]["GPU"]) == (2, SPARKS, "127.0.0.2", 2.0)
    assert [node["resources"]["GPU"] for node in facts["nodes"]] == [1.0, 1.0]
    # Read-only: the same two reads in check mode, each under timeout(1).
    assert commands.calls == [STATUS, NODES]
    assert result["cmd"] == [list(STATUS), list(NODES)]
    assert commands.kwargs == [{"environ_update": {"LC_ALL": "C"}}] * 2


def test_the_address_is_passed_to_both_commands():
    address = "127.0.0.2:6379"
    commands = FakeCommands(
        {
            (*STATUS, "--address", address): (0, fixture("2.60.0-two-nodes.status-v.txt"), ""),
            (*NODES, "--address", address): (0, fixture("2.60.0-two-nodes.nodes-json.json"), ""),
        }
    )
    result = run_module(ray_cluster_info.main, {"container": "ray-head", "address": address}, commands)
    assert result["ray_cluster"]["node_count"] == 2


def test_a_killed_worker_is_named_with_what_to_check():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": SPARKS}, cluster("worker-killed"))
    result = failed.value.result
    assert result["msg"] == (
        f"the worker at 127.0.0.3 is not in the cluster: {CHECK_WORKER} "
        "(Ray lists it DEAD: Unexpected termination: health check failed due to missing too many heartbeats)"
    )
    assert (result["missing_nodes"], result["missing_node_count"]) == (["127.0.0.3"], 1)
    assert result["ray_cluster"]["dead_nodes"] == 1


def test_a_killed_worker_is_reported_without_failing_when_asked():
    args = {"container": "ray-head", "expected_nodes": SPARKS, "required_resources": {"GPU": 1}, "fail_on_problems": False}
    result = run_module(ray_cluster_info.main, args, cluster("worker-killed"))
    assert (result["missing_nodes"], result["missing_node_count"]) == (["127.0.0.3"], 1)
    assert result["problems"][0].startswith(f"the worker at 127.0.0.3 is not in the cluster: {CHECK_WORKER} (Ray lists it DEAD")
    assert result["ray_cluster"]["dead_nodes"] == 1


def test_a_rejoined_worker_passes_beside_its_dead_predecessor():
    result = run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": SPARKS}, cluster("worker-rejoined"))
    assert (result["missing_nodes"], result["ray_cluster"]["dead_nodes"]) == ([], 1)


def test_a_node_at_an_unexpected_address_is_pointed_out():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": ["127.0.0.2", "192.168.177.12"]}, cluster("two-nodes"))
    assert failed.value.result["msg"] == (
        f"(1) the worker at 192.168.177.12 is not in the cluster: {CHECK_WORKER} "
        "(2) nodes are ALIVE at addresses not expected: 127.0.0.3; a node that registered with another address than its fabric one "
        "has RAY_NODE_IP_ADDRESS (or --node-ip-address) set wrong"
    )


def test_nodes_without_gpus_fail_each_named():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": SPARKS, "required_resources": {"GPU": 1}}, cluster("two-nodes"))
    result = failed.value.result
    gpu_hint = "check that its ray container has the GPU (--gpus all or the nvidia runtime) and that ray start did not get --num-gpus 0"
    assert result["problems"] == [
        f"the node at 127.0.0.3 has 0 GPU, less than the 1 GPU required: {gpu_hint}",
        f"the node at 127.0.0.2 has 0 GPU, less than the 1 GPU required: {gpu_hint}",
    ]
    assert [lack["ip"] for lack in result["lacking_resources"]] == ["127.0.0.3", "127.0.0.2"]


def test_memory_requirements_read_in_gib():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "required_resources": {"memory": 100 * (1 << 30)}}, cluster("head-only"))
    assert failed.value.result["msg"].startswith("the node at 127.0.0.2 has 15.99 GiB of memory, less than the 100.00 GiB of memory required: ")


def no_dashboard(status: str = "no-dashboard-head-only") -> FakeCommands:
    return FakeCommands(
        {
            STATUS: (0, fixture(f"2.60.0-{status}.status-v.txt"), ""),
            NODES: (2, "", fixture("2.60.0-no-dashboard.nodes-error.txt")),
        }
    )


def test_without_the_dashboard_a_missing_node_is_counted():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": ["192.168.177.11", "192.168.177.12"]}, no_dashboard())
    result = failed.value.result
    assert (result["missing_nodes"], result["missing_node_count"]) == ([], 1)
    assert result["msg"].startswith(
        "1 of the 2 expected nodes (192.168.177.11, 192.168.177.12) is not in the cluster (1 ALIVE); which cannot be told because "
        "the state API (`ray list nodes`) is unavailable: the dashboard is off"
    )
    assert result["ray_cluster"]["state_api"] is False
    assert "Failed to connect to API server" in result["ray_cluster"]["state_api_error"]


def test_without_the_dashboard_enough_nodes_pass_with_a_warning():
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        result = run_module(
            ray_cluster_info.main, {"container": "ray-head", "expected_nodes": ["192.168.177.11"], "required_resources": {"CPU": 2}}, no_dashboard()
        )
    assert (result["missing_node_count"], result["lacking_resources"]) == (0, [])
    (call,) = warn.call_args_list
    assert call.args[0].startswith("1 nodes are ALIVE, as many as expected, but their IPs cannot be checked against expected_nodes: the state API")


def test_a_node_list_that_does_not_parse_is_a_state_api_error():
    commands = FakeCommands({STATUS: (0, fixture("2.60.0-head-only.status-v.txt"), ""), NODES: (0, "nothing useful\n", "")})
    result = run_module(ray_cluster_info.main, {"container": "ray-head"}, commands)
    assert result["ray_cluster"]["state_api_error"] == "`ray list nodes` printed no node list: nothing useful"


@pytest.mark.parametrize(
    ("rc", "name", "reason"),
    [
        (1, "docker-28.2.2-no-such-container.status-error.txt", "the container does not exist on this host"),
        (1, "docker-28.2.2-container-stopped.status-error.txt", "the container is not running"),
        (126, "docker-28.2.2-no-ray-in-image.status-error.txt.gz", "the image has no `ray`"),
        (1, "2.60.0-not-running.status-error.txt", "no Ray head answers at that address"),
    ],
)
def test_a_failing_ray_status_says_why(rc, name, reason):
    text = fixture(name)
    commands = FakeCommands({STATUS: (rc, "", text)})
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": SPARKS}, commands)
    result = failed.value.result
    assert result["msg"].startswith(f"`ray status` failed in container ray-head (rc={rc}): {reason}")
    assert result["msg"].endswith(text.strip().splitlines()[-1][:400])
    assert commands.calls == [STATUS]


def test_an_unknown_failure_shows_its_last_line():
    commands = FakeCommands({STATUS: (3, "first\nlast words\n", "")})
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head"}, commands)
    assert failed.value.result["msg"] == "`ray status` failed in container ray-head (rc=3): see its output: last words"


def test_plain_status_without_the_node_list():
    commands = FakeCommands({(*EXEC, "status"): (0, fixture("2.60.0-two-nodes.status.txt"), "")})
    result = run_module(ray_cluster_info.main, {"container": "ray-head", "verbose": False, "list_nodes": False}, commands)
    facts = result["ray_cluster"]
    assert (facts["node_count"], facts["node_ips_known"], facts["state_api"], facts["state_api_error"]) == (2, False, False, None)


def test_given_output_is_parsed_without_running_anything():
    args = {
        "output": fixture("2.x-kuberay-gke-l4-placement-groups.status.txt"),
        "nodes_output": fixture("2.x-kuberay-gke-l4.nodes-table.txt"),
        "expected_nodes": ["10.92.0.10", "10.92.0.11"],
        "required_resources": {"GPU": 1},
    }
    commands = FakeCommands({})
    result = run_module(ray_cluster_info.main, args, commands)
    assert (result["ray_cluster"]["head_ip"], result["cmd"], commands.calls) == ("10.92.0.10", [], [])


def test_given_output_of_a_spark_pair_missing_a_gpu():
    with pytest.raises(ModuleFail) as failed:
        run_module(
            ray_cluster_info.main,
            {
                "output": fixture("2.x-gpustack-two-nodes-one-gpu-pg-pending-unindented.status.txt"),
                "expected_nodes": ["a", "b"],
                "required_resources": {"GPU": 1},
            },
        )
    assert failed.value.result["msg"].startswith("the cluster has 1 GPU in all, less than the 2 GPU its 2 nodes need: ")
    assert failed.value.result["ray_cluster"]["placement_group_demands"][0]["strategy"] == "PACK"


def test_no_cluster_status_yet_means_every_expected_node_is_missing():
    output = "No cluster status. It may take a few seconds for the Ray internal services to start up.\n"
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"output": output, "expected_nodes": ["192.168.177.11", "192.168.177.12"]})
    result = failed.value.result
    assert result["missing_nodes"] == ["192.168.177.11", "192.168.177.12"]
    assert result["msg"].startswith(f"(1) the node at 192.168.177.11 is not in the cluster: {CHECK_WORKER}")
    assert result["ray_cluster"]["available"] is False


def test_output_that_is_not_a_report_fails():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"output": "Traceback (most recent call last):\n"})
    assert failed.value.result["msg"].startswith("cannot parse the `ray status` output: no `ray status` report in the output")


def test_docker_not_installed():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head"}, FakeCommands({}), bin_paths={"docker": None})
    assert failed.value.result["msg"] == "docker not found: the Docker client is not installed"


def test_required_resources_must_be_numbers():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "required_resources": {"GPU": "one"}}, FakeCommands({}))
    assert failed.value.result["msg"] == "required_resources.GPU must be a number, not 'one'"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "one of the following is required: container, output"),
        ({"container": "ray-head", "output": "x"}, "parameters are mutually exclusive: container|output"),
        ({"container": "ray-head", "nodes_output": "x"}, "missing parameter(s) required by 'nodes_output': output"),
    ],
)
def test_argument_rules(args, message):
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, args, FakeCommands({}))
    assert failed.value.result["msg"] == message


# --- timeouts ---------------------------------------------------------------------------------------------


def test_a_ray_status_that_hangs_fails_naming_the_command():
    # timeout(1) exits 124 when it stopped the command.
    commands = FakeCommands({STATUS: (124, "", "")})
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "expected_nodes": SPARKS}, commands)
    result = failed.value.result
    assert result["msg"] == (
        f"`{' '.join(STATUS[3:])}` did not finish within 120 s and was stopped: the Docker daemon or the Ray head in ray-head does not answer: "
        "check `docker ps`, `docker logs ray-head` and `docker exec ray-head ray status` by hand"
    )
    assert result["cmd"] == [list(STATUS)]


def test_a_ray_status_killed_after_its_grace_time_counts_as_hung():
    commands = FakeCommands({(TIMEOUT, "--kill-after=10", "5", *STATUS[3:]): (137, "", "")})
    ticks = iter([0.0, 15.0])  # past the 5 s and timeout(1)'s 10 s of grace before SIGKILL
    with pytest.raises(ModuleFail) as failed:
        run_module(lambda: ray_cluster_info.main(clock=lambda: next(ticks)), {"container": "ray-head", "command_timeout": 5}, commands)
    assert "did not finish within 5 s and was stopped" in failed.value.result["msg"]


def test_a_ray_list_nodes_that_hangs_is_a_state_api_error():
    commands = FakeCommands({STATUS: (0, fixture("2.60.0-head-only.status-v.txt"), ""), NODES: (124, "", "")})
    result = run_module(ray_cluster_info.main, {"container": "ray-head"}, commands)
    assert result["ray_cluster"]["state_api_error"] == (
        f"`{' '.join(NODES[3:])}` did not finish within 120 s and was stopped: the state API did not answer in time"
    )
    assert result["ray_cluster"]["node_count"] == 1


def test_the_command_timeout_must_be_positive():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "command_timeout": 0}, FakeCommands({}))
    assert failed.value.result["msg"] == "command_timeout must be a positive number of seconds, not 0"


# --- input of unexpected types: named errors, not tracebacks --------------------------------------------


def test_a_node_list_of_unexpected_types_is_a_named_state_api_error():
    # Synthetic: a node entry whose resources are a list instead of a mapping.
    nodes = '[{"node_id": "n1", "node_ip": "127.0.0.2", "state": "ALIVE", "resources_total": [["CPU", 2.0]]}]'
    commands = FakeCommands({STATUS: (0, fixture("2.60.0-head-only.status-v.txt"), ""), NODES: (0, nodes, "")})
    result = run_module(ray_cluster_info.main, {"container": "ray-head"}, commands)
    assert result["ray_cluster"]["state_api_error"].startswith("`ray list nodes` gives a node's resources_total as list")


def test_a_report_with_a_bundle_of_unexpected_types_fails_naming_it():
    # Synthetic: a demand line whose bundle gives GPU a string.
    output = "======== Autoscaler status: 2026-12-02 18:28:13.724197 ========\nDemands:\n {'GPU': 'one'}: 1+ pending tasks/actors\n"
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"output": output})
    assert failed.value.result["msg"] == ("cannot parse the `ray status` output: resource bundle \"{'GPU': 'one'}\" gives 'GPU' as str 'one', not a number")


@pytest.mark.parametrize("amount", [10**400, "inf", "nan"])
def test_required_resources_must_be_finite_numbers(amount):
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_cluster_info.main, {"container": "ray-head", "required_resources": {"GPU": amount}}, FakeCommands({}))
    assert failed.value.result["msg"].startswith("required_resources.GPU must be a number, not ")
