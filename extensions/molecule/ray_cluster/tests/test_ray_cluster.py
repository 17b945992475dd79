"""Verify two lab nodes after the ray_cluster role: a Ray head and a worker, each on its fabric address, one cluster."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from role_runs import run_playbook, run_role

SCENARIO = "ray_cluster"
HEAD = "ray-spark-1"
WORKER = "ray-spark-2"
FABRIC_IP = {HEAD: "192.168.179.11", WORKER: "192.168.179.12"}
GCS = f"{FABRIC_IP[HEAD]}:6379"
CONTAINER = "sparkinfer-ray"
IMAGE = "sparkinfer-lab-vllm:latest"
ENV_FILE = "/etc/sparkinfer/nccl.env"
RAYLET = "/core/src/ray/raylet/raylet "
OUTPUTS_PLAYBOOK = Path(__file__).resolve().parents[1] / "outputs.yml"


def node(name: str) -> testinfra.host.Host:
    return testinfra.get_host(f"ansible://{name}?ansible_inventory={os.environ['MOLECULE_INVENTORY_FILE']}")


def raylet(name: str) -> dict[str, str]:
    """The node id and IP of the raylet running in the node's Ray container, from its arguments ({} if none)."""
    top = node(name).run(f"docker top {CONTAINER} -o pid,args")
    line = next((line for line in top.stdout.splitlines() if RAYLET in line), "")
    return dict(re.findall(r"--(node_id|node_ip_address)=(\S+)", line))


def ray_status() -> str:
    return node(HEAD).check_output(f"docker exec {CONTAINER} ray status -v --address {GCS}")


def alive_node_ids(status: str) -> list[str]:
    """The node ids `ray status` lists under Active and Idle (nodes started with `ray start` are node_<id>)."""
    listed = re.search(r"^(?:Active|Idle):\n(.*?)^Pending:", status, re.M | re.S)
    assert listed, status
    return re.findall(r"^ \d+ node_([0-9a-f]+)$", listed.group(1), re.M)


def assert_cluster_whole() -> None:
    status = ray_status()
    ids = alive_node_ids(status)
    assert len(ids) == 2, status
    for name in (HEAD, WORKER):
        own = raylet(name)
        assert own.get("node_ip_address") == FABRIC_IP[name], own
        assert own.get("node_id") in ids, (name, own, status)
    assert re.search(r"^ [\d.]+/2\.0 GPU$", status, re.M), status


def changed(output: str, name: str) -> int:
    found = re.search(rf"{name} *: ok=\d+ +changed=(\d+) ", output)
    assert found, output[-2000:]
    return int(found.group(1))


def listeners(name: str) -> list[tuple[str, str]]:
    """(local address:port, process) of every listening TCP socket of the node."""
    lines = node(name).check_output("ss -Hltnp").splitlines()
    return [(fields[3], (re.findall(r'\(\("([^"]+)"', line) or [""])[0]) for line in lines for fields in [line.split()]]


def test_both_nodes_are_alive_in_one_cluster_with_their_fabric_addresses_and_a_gpu_each():
    assert_cluster_whole()


@pytest.mark.parametrize("name", [HEAD, WORKER])
def test_each_container_runs_ray_bound_to_its_fabric_address(name):
    inspect = json.loads(node(name).check_output(f"docker inspect {CONTAINER}"))[0]
    host_config, config = inspect["HostConfig"], inspect["Config"]
    assert inspect["State"]["Running"]
    assert (host_config["NetworkMode"], host_config["IpcMode"], host_config["Runtime"]) == ("host", "host", "nvidia")
    assert host_config["RestartPolicy"]["Name"] == "unless-stopped"
    assert host_config["Init"] is True
    assert not host_config.get("DeviceRequests")
    assert "/opt/sparkinfer/models:/opt/sparkinfer/models:ro" in host_config["Binds"]
    assert config["Image"] == IMAGE
    assert config["Entrypoint"] == ["ray"]
    args = config["Cmd"]
    assert args[:2] == ["start", "--block"]
    for wanted in (f"--node-ip-address={FABRIC_IP[name]}", "--num-gpus=1", "--object-store-memory=1073741824", "--disable-usage-stats"):
        assert wanted in args, args
    if name == HEAD:
        assert {"--head", "--port=6379", "--include-dashboard=false"} <= set(args), args
    else:
        assert f"--address={GCS}" in args, args
        assert "--head" not in args


@pytest.mark.parametrize("name", [HEAD, WORKER])
def test_each_container_holds_the_nccl_environment_file_and_the_roles_variables(name):
    host = node(name)
    wanted = dict(line.split("=", 1) for line in host.file(ENV_FILE).content_string.splitlines() if line and not line.startswith("#"))
    assert wanted["RAY_NODE_IP_ADDRESS"] == wanted["VLLM_HOST_IP"] == FABRIC_IP[name]
    env = dict(line.split("=", 1) for line in host.check_output(f"docker exec {CONTAINER} env").splitlines() if "=" in line)
    for key, value in wanted.items():
        assert env.get(key) == value, key
    assert env["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert env["RAY_memory_monitor_refresh_ms"] == "0"


@pytest.mark.parametrize("name", [HEAD, WORKER])
def test_ray_binds_what_it_lets_us_bind_to_the_fabric_address_and_no_dashboard(name):
    sockets = listeners(name)
    ray = [(address, process) for address, process in sockets if process not in {"sshd", "containerd", ""}]
    assert ray, sockets
    for address, process in ray:
        ip = address.rsplit(":", 1)[0]
        # What Ray binds to an address binds to the fabric one (or loopback); the rest Ray binds to all
        # interfaces whatever it is told (its C++ gRPC servers and metrics exporters): see the role's README.
        assert ip in {FABRIC_IP[name], "127.0.0.1", "0.0.0.0"}, (address, process)
    assert not [socket[0] for socket in sockets if socket[0].endswith(":8265")], sockets
    if name == HEAD:
        assert ("0.0.0.0:6379", "gcs_server") in ray
        assert (f"{FABRIC_IP[HEAD]}:10001", "python3") in ray
    runtime_env_agent = [address for address, process in ray if process == "ray::RuntimeEnv"]
    assert runtime_env_agent, ray
    assert all(address.startswith(f"{FABRIC_IP[name]}:") for address in runtime_env_agent), runtime_env_agent


def test_a_worker_whose_raylet_stopped_is_restarted_and_joins_again():
    # SIGTERM stops the raylet gracefully: `ray start --block` takes that as a clean exit and keeps the
    # container running with no raylet; the head marks the node DEAD. A container that runs, but not in the cluster.
    old = raylet(WORKER)["node_id"]
    node(WORKER).check_output("pkill -TERM -x raylet")
    for _attempt in range(30):
        if not raylet(WORKER):
            break
        time.sleep(1)
    assert not raylet(WORKER)
    assert node(WORKER).check_output(f"docker inspect --format '{{{{.State.Status}}}}' {CONTAINER}") == "running"
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-3000:]
    assert (changed(output, HEAD), changed(output, WORKER)) == (0, 1)
    assert raylet(WORKER)["node_id"] != old
    assert_cluster_whole()


def test_a_stopped_worker_is_started_again():
    node(WORKER).check_output(f"docker stop {CONTAINER}")
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-3000:]
    assert (changed(output, HEAD), changed(output, WORKER)) == (0, 1)
    assert_cluster_whole()


def run_outputs(tmp_path: Path, extra_vars: dict) -> tuple[int, str, dict[str, dict]]:
    """Run the role through outputs.yml, which saves each node's ray_cluster_address and ray_cluster_facts."""
    code, output = run_playbook(OUTPUTS_PLAYBOOK, {**extra_vars, "outputs_dir": str(tmp_path)}, scenario=SCENARIO)
    saved = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in tmp_path.glob("*.json")}
    return code, output, saved


def test_a_new_head_restarts_the_worker_and_the_dashboard_listens_on_loopback_only(tmp_path):
    try:
        code, output, saved = run_outputs(tmp_path, {"ray_cluster_dashboard_enabled": True})
        assert code == 0, output[-3000:]
        # The head's command changed: a new head, so a new session, and the worker restarted to join it.
        assert (changed(output, HEAD), changed(output, WORKER)) == (1, 1)
        assert_cluster_whole()
        dashboard = [socket[0] for socket in listeners(HEAD) if socket[0].endswith(":8265")]
        assert dashboard == ["127.0.0.1:8265"]
        nodes = json.loads(node(HEAD).check_output(f"docker exec {CONTAINER} ray list nodes --format json --address {GCS}"))
        alive = {entry["node_ip"]: entry for entry in nodes if entry["state"] == "ALIVE"}
        assert sorted(alive) == sorted(FABRIC_IP.values())
        assert all(entry["resources_total"]["GPU"] == 1.0 for entry in alive.values())
        assert alive[FABRIC_IP[HEAD]]["is_head_node"] is True
        # The outputs, the same on every node: the head's address and what ray_cluster_info saw.
        for name in (HEAD, WORKER):
            assert saved[name]["address"] == GCS
            facts = saved[name]["facts"]
            assert facts["node_count"] == 2
            assert facts["alive_ips"] == sorted(FABRIC_IP.values())
            assert facts["head_ip"] == FABRIC_IP[HEAD]
            assert facts["totals"]["GPU"] == 2.0
    finally:
        code, output = run_role(SCENARIO, {})
        assert code == 0, output[-3000:]
        assert (changed(output, HEAD), changed(output, WORKER)) == (1, 1)
    assert_cluster_whole()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"ray_cluster_state": "stopped"}, "value of ray_cluster_state must be one of: started, absent, got: stopped"),
        ({"ray_cluster_port": "gcs"}, "argument 'ray_cluster_port' is of type str and we were unable to convert to int"),
        ({"ray_cluster_dashboard_enabled": "sometimes"}, "argument 'ray_cluster_dashboard_enabled' is of type str and we were unable to convert to bool"),
        ({"ray_cluster_extra_env": "RAY_memory_usage_threshold"}, "argument 'ray_cluster_extra_env' is of type str and we were unable to convert to dict"),
        ({"ray_cluster_image": ""}, "ray_cluster_image is empty"),
        (
            {"ray_cluster_image": "sparkinfer-lab-vllm:missing"},
            "sparkinfer-lab-vllm:missing (ray_cluster_image) is not on ray-spark-1: run the vllm_image role first",
        ),
        ({"ray_cluster_node_ip": ""}, "ray_cluster_node_ip on ray-spark-1 is '', not an IPv4 address"),
        ({"ray_cluster_env_file": "/etc/sparkinfer/missing.env"}, "does not exist on ray-spark-1: run the nccl_network role first"),
    ],
)
def test_the_role_refuses_bad_input_naming_the_variable(override, message):
    code, output = run_role(SCENARIO, override)
    assert code == 2, output[-3000:]
    assert message in output, output[-3000:]
    # Refused before anything ran: no Ray container was touched.
    assert not re.search(r"changed=[1-9]", output), output[-3000:]


def test_a_worker_that_cannot_reach_the_head_fails_the_role_naming_it():
    worker = node(WORKER)
    block = f"OUTPUT -p tcp -d {FABRIC_IP[HEAD]} --dport 6379 -j REJECT"
    worker.check_output(f"iptables -I {block}")
    try:
        worker.check_output(f"docker stop {CONTAINER}")
        start = time.monotonic()
        code, output = run_role(SCENARIO, {"ray_cluster_wait_timeout": 20})
        elapsed = time.monotonic() - start
        assert code == 2, output[-3000:]
        assert f"{WORKER} ({FABRIC_IP[WORKER]}) has no Ray raylet in its container {CONTAINER} after 20 s" in output, output[-3000:]
        assert f"could not join the head at {GCS}" in output, output[-3000:]
        assert f"{WORKER} failed above" in output, output[-3000:]
        assert elapsed < 150, elapsed
    finally:
        worker.check_output(f"iptables -D {block}")
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-3000:]
    assert_cluster_whole()


def test_absent_removes_the_ray_containers_workers_first_and_nothing_else():
    code, output = run_role(SCENARIO, {"ray_cluster_state": "absent"})
    assert code == 0, output[-3000:]
    assert (changed(output, HEAD), changed(output, WORKER)) == (1, 1)
    assert (
        output.index("Absent | Remove the Ray worker containers")
        < output.index(f"changed: [{WORKER}]")
        < output.index("Absent | Remove the Ray head container")
    )
    for name in (HEAD, WORKER):
        host = node(name)
        assert host.run(f"docker inspect {CONTAINER}").rc != 0
        assert host.run(f"docker image inspect {IMAGE}").rc == 0
        assert host.file(ENV_FILE).exists
