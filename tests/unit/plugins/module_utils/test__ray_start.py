"""ray start arguments: the head's and a worker's on fixed ports, and the refusals that name the key."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_start import RayStartError, ray_start_args

# The ray_cluster role's defaults.
PORTS = {
    "gcs": 6379,
    "client_server": 10001,
    "dashboard": 8265,
    "node_manager": 6380,
    "object_manager": 6381,
    "dashboard_agent_grpc": 6382,
    "dashboard_agent_listen": 52365,
    "runtime_env_agent": 6383,
    "metrics_export": 6384,
    "min_worker": 10002,
    "max_worker": 10999,
}
SPEC = {"node_ip": "192.168.100.10", "num_gpus": 1, "num_cpus": None, "object_store_memory": 1073741824, "dashboard": False, "ports": PORTS}
EVERY_NODE = [
    "start",
    "--block",
    "--node-ip-address=192.168.100.10",
    "--num-gpus=1",
    "--object-store-memory=1073741824",
    "--disable-usage-stats",
    "--log-color=false",
    "--node-manager-port=6380",
    "--object-manager-port=6381",
    "--dashboard-agent-grpc-port=6382",
    "--dashboard-agent-listen-port=52365",
    "--runtime-env-agent-port=6383",
    "--metrics-export-port=6384",
    "--min-worker-port=10002",
    "--max-worker-port=10999",
]


def test_the_head_serves_the_gcs_and_the_client_server_and_no_dashboard():
    assert ray_start_args(SPEC) == [*EVERY_NODE, "--head", "--port=6379", "--ray-client-server-port=10001", "--include-dashboard=false"]


def test_the_head_dashboard_listens_on_loopback_only():
    assert ray_start_args({**SPEC, "dashboard": True})[-3:] == ["--include-dashboard=true", "--dashboard-host=127.0.0.1", "--dashboard-port=8265"]


def test_a_worker_joins_the_head_and_needs_none_of_its_ports():
    worker_ports = {key: value for key, value in PORTS.items() if key not in ("gcs", "client_server", "dashboard")}
    assert ray_start_args({**SPEC, "ports": worker_ports}, "192.168.100.10:6379") == [*EVERY_NODE, "--address=192.168.100.10:6379"]


def test_a_cpu_count_is_passed_when_given():
    assert "--num-cpus=4" in ray_start_args({**SPEC, "num_cpus": 4})
    assert not [arg for arg in ray_start_args(SPEC) if arg.startswith("--num-cpus")]


def test_the_bounds_themselves_are_allowed():
    # A head that takes no tasks (no GPU, no CPU), and a worker port range up to the last port.
    args = ray_start_args({**SPEC, "num_gpus": 0, "num_cpus": 0, "ports": {**PORTS, "max_worker": 65535}})
    assert "--num-gpus=0" in args
    assert "--num-cpus=0" in args
    assert "--max-worker-port=65535" in args


@pytest.mark.parametrize(
    ("change", "head_address", "message"),
    [
        ({"node_ip": ""}, None, "node_ip must be an IPv4 address, got ''"),
        ({"node_ip": "fe80::1"}, None, "node_ip must be an IPv4 address, got 'fe80::1'"),
        ({"num_gpus": -1}, None, "num_gpus must be a whole number of at least 0, got -1"),
        ({"num_gpus": True}, None, "num_gpus must be a whole number of at least 0, got True"),
        ({"num_cpus": -1}, None, "num_cpus must be a whole number of at least 0, got -1"),
        ({"object_store_memory": 0}, None, "object_store_memory must be a whole number of at least 1, got 0"),
        ({"ports": {**PORTS, "gcs": 70000}}, None, "ports.gcs must be a whole number from 1 to 65535, got 70000"),
        ({"ports": {**PORTS, "min_worker": 11000}}, None, "ports.min_worker (11000) must be below ports.max_worker (10999)"),
        ({"ports": {**PORTS, "min_worker": 10999}}, None, "ports.min_worker (10999) must be below ports.max_worker (10999)"),
        ({"ports": {key: value for key, value in PORTS.items() if key != "dashboard"}}, None, "ports lacks dashboard"),
        # A worker's ports given to the head.
        (
            {"ports": {key: value for key, value in PORTS.items() if key not in ("gcs", "client_server", "dashboard")}},
            None,
            "ports lacks gcs, client_server, dashboard",
        ),
        ({"ports": [6379]}, None, "ports must be a mapping of port name to number, got list"),
        ({"gpus": 1, "cpus": 4}, None, "the spec has unknown keys cpus, gpus; allowed: node_ip, num_gpus, num_cpus, object_store_memory, ports, dashboard"),
        ({}, "", "head_address must be the head's HOST:PORT, got ''"),
    ],
)
def test_a_spec_that_cannot_start_ray_is_refused_naming_the_key(change, head_address, message):
    with pytest.raises(RayStartError) as raised:
        ray_start_args({**SPEC, **change}, head_address)
    assert str(raised.value) == message
