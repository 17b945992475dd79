"""Verify two lab nodes after the ray_cluster role: a Ray head and a worker, each on its fabric address, one cluster."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from lab_reboot import reboot
from probes import connects, connects_any, connects_from
from role_runs import run_playbook, run_role

SCENARIO = "ray_cluster"
HEAD = "ray-spark-1"
WORKER = "ray-spark-2"
FABRIC_IP = {HEAD: "192.168.179.11", WORKER: "192.168.179.12"}
GCS = f"{FABRIC_IP[HEAD]}:6379"
CONTAINER = "sparkinfer-ray"
IMAGE = "sparkinfer-lab-vllm:latest"
ENV_FILE = "/etc/sparkinfer/nccl.env"
MODEL = "/opt/sparkinfer/models/tiny-qwen3-moe"
RDMA_DIR = "/dev/infiniband"
RAYLET = "/core/src/ray/raylet/raylet "
OUTPUTS_PLAYBOOK = Path(__file__).resolve().parents[1] / "outputs.yml"
# The role's pinned Ray ports (defaults/main.yml): GCS, node manager, object manager, dashboard agent gRPC, runtime
# env agent, metrics export, dashboard agent HTTP, client server, autoscaler and dashboard metrics; and the workers' range.
RAY_PORTS = {6379, 6380, 6381, 6382, 6383, 6384, 52365, 10001, 44217, 44227}
WORKER_PORTS = range(10002, 11000)
DPORTS = "6379,6380,6381,6382,6383,6384,52365,10001,10002:10999,44217,44227"
CHAIN = "SPARKINFER-RAY"
# Ray's token: kept on the admin box (this host), written on every node, mounted read-only in the containers.
TOKEN_KEPT = Path.home() / ".config" / "sparkinfer" / f"{HEAD}-ray-auth-token"
TOKEN_PATH = "/etc/sparkinfer/ray-auth-token"
TOKEN_MOUNT = "/run/sparkinfer/ray-auth-token"
BOOT_UNIT = "/etc/systemd/system/sparkinfer-ray-firewall.service"
REFUSED = "ray.exceptions.AuthenticationError: RPC error: InvalidAuthToken: Authentication token is missing or incorrect."
WILDCARDS = {"0.0.0.0", "*", "[::]"}


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


def task_results(output: str, task: str) -> str:
    """What a run printed for a task of the role: its hosts' results, up to the next task."""
    found = re.search(re.escape(task) + r"\] \*+ (.*?)(?= TASK \[| PLAY RECAP |$)", output)
    return found.group(1) if found else ""


def read_the_cluster_once(output: str) -> bool:
    """Whether a run took the head's reading in Service as Verify's, skipping the second wait and raylet reads."""
    waited = task_results(output, "Verify | Wait until every node is ALIVE in the cluster with its fabric address and GPU")
    reused = task_results(output, "Verify | Take the head's reading in Service as the cluster, as nothing restarted")
    return f"skipping: [{HEAD}]" in waited and f"ok: [{HEAD}]" in reused


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
    # No RoCE HCA in the lab (nccl_network's transport is socket): no RDMA device, memlock limit or IPC_LOCK.
    assert not (host_config.get("Devices") or host_config.get("Ulimits") or host_config.get("CapAdd"))
    assert f"{MODEL}:{MODEL}:ro" in host_config["Binds"]
    assert config["Image"] == IMAGE
    assert config["Entrypoint"] == ["ray"]
    args = config["Cmd"]
    assert args[:2] == ["start", "--block"]
    for wanted in (
        f"--node-ip-address={FABRIC_IP[name]}",
        "--num-gpus=1",
        "--object-store-memory=1073741824",
        "--disable-usage-stats",
        "--node-manager-port=6380",
        "--object-manager-port=6381",
        "--dashboard-agent-grpc-port=6382",
        "--runtime-env-agent-port=6383",
        "--metrics-export-port=6384",
        "--dashboard-agent-listen-port=52365",
        "--min-worker-port=10002",
        "--max-worker-port=10999",
    ):
        assert wanted in args, args
    if name == HEAD:
        assert {"--head", "--port=6379", "--ray-client-server-port=10001", "--include-dashboard=false"} <= set(args), args
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
    assert (env["AUTOSCALER_METRIC_PORT"], env["DASHBOARD_METRIC_PORT"]) == ("44217", "44227")
    # The persistent caches vLLM's workers compile into under the Ray executor, each where its variable points.
    caches = {"VLLM_CACHE_ROOT": "vllm", "TRITON_CACHE_DIR": "triton", "FLASHINFER_WORKSPACE_BASE": "flashinfer", "HF_HOME": "huggingface"}
    mounts = json.loads(host.check_output(f"docker inspect --format '{{{{json .Mounts}}}}' {CONTAINER}"))
    mounted = {mount["Destination"]: (mount["Source"], mount["RW"]) for mount in mounts}
    for variable, cache in caches.items():
        assert env[variable] == f"/var/cache/sparkinfer/{cache}"
        assert mounted[env[variable]] == (f"/opt/sparkinfer/cache/{cache}", True)


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


# A driver on the head with one actor on each node: Ray worker processes, which listen in the workers' port range.
PROBE = """
import sys, time
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
ray.init(address="auto")
@ray.remote(num_cpus=0)
class Probe:
    def ping(self):
        return ray.get_runtime_context().get_node_id()
nodes = [entry["NodeID"] for entry in ray.nodes() if entry["Alive"]]
probes = [Probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote() for node_id in nodes]
print(ray.get([probe.ping.remote() for probe in probes]), flush=True)
time.sleep(float(sys.argv[1]))
"""


def worker_listeners(name: str) -> list[tuple[str, str]]:
    return [(address, process) for address, process in listeners(name) if int(address.rsplit(":", 1)[1]) in WORKER_PORTS]


@contextlib.contextmanager
def ray_workers_running(seconds: int = 45):
    """Run PROBE in the head's container until every node has a Ray worker process listening, then stop it."""
    head = node(HEAD)
    script = base64.b64encode(PROBE.encode()).decode()
    head.check_output(f"echo {script} | base64 -d > /tmp/sparkinfer-probe.py && docker cp /tmp/sparkinfer-probe.py {CONTAINER}:/tmp/sparkinfer-probe.py")
    head.check_output(f"docker exec -d {CONTAINER} python3 /tmp/sparkinfer-probe.py {seconds}")
    try:
        for _attempt in range(30):
            if all(worker_listeners(name) for name in (HEAD, WORKER)):
                break
            time.sleep(1)
        yield {name: worker_listeners(name) for name in (HEAD, WORKER)}
    finally:
        # The driver ends now, or by itself after `seconds` where this stop failed; Ray ends its actors with it.
        head.run("pkill -TERM -f sparkinfer-probe.py")
        for _attempt in range(seconds + 15):
            if "sparkinfer-probe.py" not in head.check_output(f"docker top {CONTAINER} -o pid,args"):
                break
            time.sleep(1)


def test_every_wildcard_listener_is_sshd_or_a_pinned_ray_port_and_ray_workers_are_unreachable_from_outside():
    with ray_workers_running() as workers:
        assert all(workers.values()), workers
        for name in (HEAD, WORKER):
            sockets = listeners(name)
            wildcard: dict[int, set[str]] = {}
            for address, process in sockets:
                ip, port = address.rsplit(":", 1)
                if ip in WILDCARDS:
                    wildcard.setdefault(int(port), set()).add(process)
                else:
                    # The rest: the fabric address or loopback (127.0.0.11 is Docker's DNS for the lab node's network).
                    assert ip in {FABRIC_IP[name], "127.0.0.1", "127.0.0.11"}, (name, address, process)
            assert wildcard.pop(22) == {"sshd"}, sockets
            for port, processes in wildcard.items():
                assert port in RAY_PORTS or port in WORKER_PORTS, (name, port, processes, sockets)
            # Ray's own on every node: the raylet (node manager, object manager), the dashboard agent (gRPC, metrics)
            # and a worker process; on the head also the GCS, the autoscaler monitor and the dashboard's metrics.
            assert {6380, 6381, 6382, 6384} <= set(wildcard), (name, sockets)
            assert set(wildcard) & set(WORKER_PORTS), (name, sockets)
            if name == HEAD:
                assert {6379, 44217, 44227} <= set(wildcard), sockets
        # A worker process's port on the worker node: closed to the molecule host, open to the head.
        port = int(workers[WORKER][0][0].rsplit(":", 1)[1])
        assert not connects(FABRIC_IP[WORKER], port), port
        assert connects_from(node(HEAD), FABRIC_IP[WORKER], port), port


def iptables_rules(name: str, command: str = "iptables") -> list[str]:
    return node(name).check_output(f"{command} -S").splitlines()


def assert_ray_chain(rules: list[str], sources: list[str]) -> None:
    """One jump, first in INPUT, for every pinned port and the workers' range; the chain accepts loopback, replies and the sources."""
    jump = [rule for rule in rules if rule.endswith(f"-j {CHAIN}")]
    assert len(jump) == 1, rules
    assert re.fullmatch(rf"-A INPUT -p tcp -m multiport --dports {DPORTS} .*-j {CHAIN}", jump[0]), jump
    assert next(rule for rule in rules if rule.startswith("-A INPUT ")) == jump[0], rules
    assert [rule for rule in rules if rule.startswith(f"-A {CHAIN} ")] == [
        f"-A {CHAIN} -i lo -j ACCEPT",
        f"-A {CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        *(f"-A {CHAIN} -s {source}/32 -j ACCEPT" for source in sources),
        f"-A {CHAIN} -j DROP",
    ], rules


@pytest.mark.parametrize("name", [HEAD, WORKER])
def test_the_firewall_lets_only_loopback_and_the_cluster_nodes_reach_ray_ports(name):
    rules = iptables_rules(name)
    assert_ray_chain(rules, [FABRIC_IP[HEAD], FABRIC_IP[WORKER]])
    # Docker's chains in the lab node (its nested engine) are still there.
    assert "-A FORWARD -j DOCKER-USER" in rules, rules
    assert_ray_chain(iptables_rules(name, "ip6tables"), [])


def test_the_molecule_host_on_the_fabric_cannot_reach_ray_but_the_other_node_can():
    # This process runs on the host that owns the fabric network's bridge: an address on the fabric that is not a node's.
    own = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"inet 192\.168\.179\.1/24 ", own), own
    # The path works (sshd answers), Ray's ports do not: the GCS on the head, the raylet and a worker agent's port on each node.
    assert connects(FABRIC_IP[HEAD], 22)
    start = time.monotonic()
    assert not connects(FABRIC_IP[HEAD], 6379)
    assert time.monotonic() - start < 5
    refused = connects_any([(FABRIC_IP[name], port) for name in (HEAD, WORKER) for port in (6380, 6381, 6384)])
    assert not any(refused.values()), refused
    # Between the nodes Ray's ports are open, both ways.
    assert connects_from(node(WORKER), FABRIC_IP[HEAD], 6379)
    assert connects_from(node(WORKER), FABRIC_IP[HEAD], 6380)
    assert connects_from(node(HEAD), FABRIC_IP[WORKER], 6380)
    # And on loopback.
    assert connects_from(node(HEAD), "127.0.0.1", 6379)


@pytest.mark.parametrize("name", [HEAD, WORKER])
def test_each_container_reads_rays_token_from_a_root_only_file_and_no_environment_holds_it(name):
    host = node(name)
    token = TOKEN_KEPT.read_text(encoding="utf-8").strip()
    assert len(token) == 40
    kept = host.file(TOKEN_PATH)
    assert (kept.user, kept.group, kept.mode, kept.content_string) == ("root", "root", 0o600, token)
    inspect = host.check_output(f"docker inspect {CONTAINER}")
    assert token not in inspect
    config = json.loads(inspect)[0]
    env = dict(item.split("=", 1) for item in config["Config"]["Env"])
    assert (env["RAY_AUTH_MODE"], env["RAY_AUTH_TOKEN_PATH"]) == ("token", TOKEN_MOUNT)
    assert "RAY_AUTH_TOKEN" not in env
    assert f"{TOKEN_PATH}:{TOKEN_MOUNT}:ro" in config["HostConfig"]["Binds"]


def ray_status_from_worker_as(client_env: dict[str, str]):
    """`ray status` against the head's GCS from the worker's container, with the client's auth variables overridden."""
    flags = " ".join(f"--env {key}={value}" for key, value in client_env.items())
    return node(WORKER).run(f"docker exec {flags} {CONTAINER} ray status --address {GCS}")


@pytest.mark.parametrize(
    "client_env",
    [
        {"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN_PATH": ""},
        {"RAY_AUTH_TOKEN_PATH": "", "RAY_AUTH_TOKEN": "not-the-clusters-token"},
    ],
    ids=["no token", "a wrong token"],
)
def test_the_gcs_refuses_a_client_of_a_cluster_node_without_the_token(client_env):
    # From the worker, which the firewall lets in: only the token keeps this client out.
    refused = ray_status_from_worker_as(client_env)
    assert refused.rc != 0, refused.stdout
    assert REFUSED in refused.stderr, refused.stderr[-2000:]


def wait_for(condition, seconds: int, what: str) -> None:
    deadline = time.monotonic() + seconds
    while True:
        with contextlib.suppress(Exception):
            if condition():
                return
        assert time.monotonic() < deadline, f"no {what} after {seconds} s"
        time.sleep(2)


def test_after_a_reboot_the_chain_is_back_before_docker_restarts_ray_and_a_rerun_changes_nothing():
    # Restarting the lab node's container is its reboot: a new network namespace (no iptables rules), systemd boots,
    # Docker starts the Ray worker again (unless-stopped).
    reboot(WORKER)
    wait_for(lambda: raylet(WORKER), 180, "raylet on the rebooted worker")
    worker = node(WORKER)
    assert_ray_chain(iptables_rules(WORKER), [FABRIC_IP[HEAD], FABRIC_IP[WORKER]])
    assert_ray_chain(iptables_rules(WORKER, "ip6tables"), [])
    # Applied before Docker started (its unit is ordered before docker.service and required by it).
    shown = worker.check_output(
        "systemctl show --value -p ActiveEnterTimestampMonotonic sparkinfer-ray-firewall.service; "
        "systemctl show --value -p ExecMainStartTimestampMonotonic docker.service"
    ).split()
    firewall_up, docker_start = (int(value) for value in shown)
    assert 0 < firewall_up <= docker_start, shown
    # Docker requires the unit: a restart by hand, which would restart Docker and every container, is refused.
    restarted = worker.run("systemctl restart sparkinfer-ray-firewall.service")
    assert restarted.rc != 0
    assert "refuse manual start/stop" in restarted.stderr, restarted.stderr
    assert worker.check_output("systemctl show --value -p ExecMainStartTimestampMonotonic docker.service") == str(docker_start)
    # Ray's ports on the rebooted node: closed to the molecule host, open to the head.
    refused = connects_any([(FABRIC_IP[WORKER], 6380), (FABRIC_IP[WORKER], 6381)])
    assert not any(refused.values()), refused
    assert connects_from(node(HEAD), FABRIC_IP[WORKER], 6380)
    # The worker rejoined the head on its own, and the role finds nothing to change.
    wait_for(lambda: assert_cluster_whole() is None, 120, "whole cluster after the reboot")
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-3000:]
    assert (changed(output, HEAD), changed(output, WORKER)) == (0, 0)
    # Nothing restarted: the head's one reading of the cluster is the verification.
    assert read_the_cluster_once(output), output[-3000:]


def test_the_firewall_removes_its_stale_rules_and_can_be_turned_off_and_on():
    worker = node(WORKER)
    # A node that left the cluster and a jump for ports of an earlier configuration.
    worker.check_output(f"iptables -I {CHAIN} 3 -s 192.168.179.99/32 -j ACCEPT")
    comment = "sparkinfer.cluster ray_cluster - Ray ports, cluster nodes only"
    worker.check_output(f"iptables -I INPUT 1 -p tcp -m multiport --dports 6379,10002:19999 -m comment --comment '{comment}' -j {CHAIN}")
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-3000:]
    # Both put right in one iptables-restore commit.
    assert (changed(output, HEAD), changed(output, WORKER)) == (0, 1)
    test_the_firewall_lets_only_loopback_and_the_cluster_nodes_reach_ray_ports(WORKER)
    try:
        code, output = run_role(SCENARIO, {"ray_cluster_firewall_enabled": False})
        assert code == 0, output[-3000:]
        for name in (HEAD, WORKER):
            for command in ("iptables", "ip6tables"):
                rules = iptables_rules(name, command)
                assert not [rule for rule in rules if CHAIN in rule], rules
            assert "-A FORWARD -j DOCKER-USER" in iptables_rules(name), name
        assert connects(FABRIC_IP[HEAD], 6379)
    finally:
        code, output = run_role(SCENARIO, {})
        assert code == 0, output[-3000:]
    for name in (HEAD, WORKER):
        test_the_firewall_lets_only_loopback_and_the_cluster_nodes_reach_ray_ports(name)
    assert not connects(FABRIC_IP[HEAD], 6379)


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
    # A worker restarted: Verify waits for the cluster again instead of trusting the reading taken before.
    assert not read_the_cluster_once(output), output[-3000:]
    assert raylet(WORKER)["node_id"] != old
    assert_cluster_whole()


def run_outputs(tmp_path: Path, extra_vars: dict) -> tuple[int, str, dict[str, dict]]:
    """Run the role through outputs.yml, which saves each node's ray_cluster_address and ray_cluster_facts."""
    code, output = run_playbook(OUTPUTS_PLAYBOOK, {**extra_vars, "outputs_dir": str(tmp_path)}, scenario=SCENARIO)
    saved = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in tmp_path.glob("*.json")}
    return code, output, saved


def test_a_new_head_token_and_rdma_restart_every_container_the_old_token_is_refused_and_the_dashboard_is_on_loopback_only(tmp_path):
    # One run changes all three (each restarts every Ray container): the head's command (the dashboard on), Ray's token,
    # and RDMA for NCCL, with the lab's stand-in for a ConnectX-7's RDMA devices (the uverbs character device, major 231).
    old = TOKEN_KEPT.read_text(encoding="utf-8").strip()
    new = "rotated-" + old[:32]
    for name in (HEAD, WORKER):
        node(name).check_output(f"mkdir -p {RDMA_DIR} && mknod {RDMA_DIR}/uverbs0 c 231 192")
    try:
        code, output, saved = run_outputs(tmp_path, {"ray_cluster_dashboard_enabled": True, "ray_cluster_auth_token": new, "ray_cluster_rdma": True})
        assert code == 0, output[-3000:]
        # On each node the token file, then the container: a new head, so a new session, and the worker restarted to
        # join it, both reading the new token at start.
        assert (changed(output, HEAD), changed(output, WORKER)) == (2, 2)
        assert new not in output
        assert_cluster_whole()
        for name in (HEAD, WORKER):
            assert node(name).file(TOKEN_PATH).content_string == new
            host_config = json.loads(node(name).check_output(f"docker inspect --format '{{{{json .HostConfig}}}}' {CONTAINER}"))
            assert host_config["Devices"] == [{"PathOnHost": RDMA_DIR, "PathInContainer": RDMA_DIR, "CgroupPermissions": "rwm"}]
            # The lab machine's locked-memory limit stands for a real host's unlimited one (molecule.yml).
            assert host_config["Ulimits"] == [{"Name": "memlock", "Soft": 8388608, "Hard": 8388608}]
            assert host_config["CapAdd"] == ["IPC_LOCK"]
        refused = ray_status_from_worker_as({"RAY_AUTH_TOKEN_PATH": "", "RAY_AUTH_TOKEN": old})
        assert REFUSED in refused.stderr, refused.stderr[-2000:]
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
        # Back to the dashboard and RDMA off and the token kept on the admin box: the same two changes on each node.
        code, output = run_role(SCENARIO, {})
        assert code == 0, output[-3000:]
        assert (changed(output, HEAD), changed(output, WORKER)) == (2, 2)
        for name in (HEAD, WORKER):
            node(name).run(f"rm -rf {RDMA_DIR}")
    assert_cluster_whole()
    for name in (HEAD, WORKER):
        assert node(name).file(TOKEN_PATH).content_string == old
        host_config = json.loads(node(name).check_output(f"docker inspect --format '{{{{json .HostConfig}}}}' {CONTAINER}"))
        assert not (host_config.get("Devices") or host_config.get("CapAdd"))


# The role checks its argument specification itself (one case here); every other spec refusal is in the e2e scenario's
# drill 7, all in one site.yml run. The rules of the variables alone are one table (module_utils/_ray_cluster_settings.py,
# each rule unit-tested): one case here shows the preflight refuses on it. The rest need the node: what earlier roles left.
@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"ray_cluster_state": "stopped"}, "value of ray_cluster_state must be one of: auto, started, absent, got: stopped"),
        ({"ray_cluster_node_manager_port": 6379}, "Ray's ports overlap: 6379, 6379, 6381,"),
        (
            {"ray_cluster_image": "sparkinfer-lab-vllm:missing"},
            "sparkinfer-lab-vllm:missing (ray_cluster_image) is not on ray-spark-1: run the vllm_image role first",
        ),
        (
            {"ray_cluster_env_file": "/etc/sparkinfer/missing.env", "ray_cluster_model": "/opt/sparkinfer/models/elsewhere", "ray_cluster_rdma": True},
            "/etc/sparkinfer/missing.env, /opt/sparkinfer/models/elsewhere, /dev/infiniband not found on ray-spark-1. The environment "
            "file (ray_cluster_env_file) is written by the nccl_network role: run it first (playbooks/network.yml); it holds the NCCL, "
            "Gloo and Ray environment the Ray containers read. vLLM's Ray workers load the model (ray_cluster_model) from the path "
            "the head serves: run the vllm_image role (playbooks/image.yml), which copies it to every node, or set ray_cluster_model "
            "to where it is. NCCL in the Ray workers uses RoCE only through the RDMA devices (ray_cluster_rdma_devices): load the "
            "ConnectX-7's RDMA drivers",
        ),
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
        # Not Ray's 30 s drain (the container's stop timeout): the worker only needs to be down for the role to start it.
        worker.check_output(f"docker stop --time 5 {CONTAINER}")
        start = time.monotonic()
        code, output = run_role(SCENARIO, {"ray_cluster_wait_timeout": 20})
        elapsed = time.monotonic() - start
        assert code == 2, output[-3000:]
        assert f"{WORKER} ({FABRIC_IP[WORKER]}) has no Ray raylet in its container {CONTAINER} after 20 s" in output, output[-3000:]
        assert re.search(r"after 20 s \(container: (running|restarting|exited), exit code \d+, \d+ restarts\)", output), output[-3000:]
        assert f"could not join the head at {GCS}" in output, output[-3000:]
        assert f"{WORKER} failed above" in output, output[-3000:]
        assert elapsed < 150, elapsed
    finally:
        worker.check_output(f"iptables -D {block}")
    # Not run again to mend: the test after this one removes the cluster, whose worker is left unjoined.


def test_absent_removes_the_ray_containers_workers_first_and_nothing_else():
    code, output = run_role(SCENARIO, {"ray_cluster_state": "absent"})
    assert code == 0, output[-3000:]
    # The container, the token, then the firewall: the jump, the chain and the rules files (one module run), the boot
    # unit (disabled, then its file removed; systemd's reload reports no change).
    assert (changed(output, HEAD), changed(output, WORKER)) == (5, 5)
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
        # The role's firewall chain and jump are gone with Ray; Docker's chains are not.
        for command in ("iptables", "ip6tables"):
            rules = iptables_rules(name, command)
            assert not [rule for rule in rules if CHAIN in rule], rules
        assert "-A FORWARD -j DOCKER-USER" in iptables_rules(name), name
        # So are the node's token and the boot unit and its rules; Docker no longer requires the unit.
        for path in (TOKEN_PATH, BOOT_UNIT, "/etc/sparkinfer/ray-firewall.rules", "/etc/sparkinfer/ray-firewall6.rules"):
            assert not host.file(path).exists, path
        assert host.run("systemctl list-dependencies --plain docker.service | grep -c sparkinfer-ray-firewall").stdout.strip() == "0"
        assert host.check_output("systemctl is-active docker") == "active"
