"""ray_cluster's rules on its variables alone, on the role's defaults with the worked inventory's cluster
(inventories/example-two-sparks) and the mistakes a user makes in them; ray_cluster's preflight and validate_inventory.yml
judge by the same rules."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_cluster_settings import (
    METRICS_PORT_VARIABLES,
    PORT_VARIABLES,
    START_SPEC_PORTS,
    firewall_ports,
    setting_problems,
    start_spec,
)

from .test__ray_start import PORTS as RAY_START_PORTS

# The role's defaults (roles/ray_cluster/defaults/main.yml) as spark-a of the worked inventory settles them, with Ray
# asked for (vLLM's Ray executor).
STARTED = {
    "ray_cluster_state": "auto",
    "vllm_serve_executor": "ray",
    "ray_cluster_hosts": ["spark-a", "spark-b"],
    "ray_cluster_head_host": "spark-a",
    "ray_cluster_image": "vllm/vllm-openai:v0.17.1",
    "ray_cluster_node_ip": "192.168.177.11",
    "ray_cluster_model": "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8",
    "ray_cluster_rdma": True,
    "ray_cluster_rdma_devices": ["/dev/infiniband"],
    "ray_cluster_port": 6379,
    "ray_cluster_node_manager_port": 6380,
    "ray_cluster_object_manager_port": 6381,
    "ray_cluster_dashboard_agent_grpc_port": 6382,
    "ray_cluster_runtime_env_agent_port": 6383,
    "ray_cluster_metrics_export_port": 6384,
    "ray_cluster_dashboard_agent_listen_port": 52365,
    "ray_cluster_client_server_port": 10001,
    "ray_cluster_min_worker_port": 10002,
    "ray_cluster_max_worker_port": 10999,
    "ray_cluster_autoscaler_metrics_port": 44217,
    "ray_cluster_dashboard_metrics_port": 44227,
    "ray_cluster_dashboard_port": 8265,
    "ray_cluster_metrics_scrapers": [],
    "ray_cluster_auth_token": "",
    "ray_cluster_auth_token_path": "/etc/sparkinfer/ray-auth-token",
    "ray_cluster_log_max_size": "100m",
    "ray_cluster_log_max_files": 3,
}
PORTS_OVERLAP = "Ray's ports overlap: "


def test_the_defaults_of_a_started_cluster_hold_together():
    assert setting_problems("spark-a", STARTED) == []


def test_nothing_set_is_nothing_judged():
    assert setting_problems("spark-a", {}) == []


@pytest.mark.parametrize(
    ("node", "head", "outside"),
    [("spark-c", "spark-a", "spark-c"), ("spark-a", "spark-z", "spark-z"), ("spark-c", "spark-c", "spark-c")],
)
def test_this_node_and_the_head_are_among_the_hosts(node, head, outside):
    problems = setting_problems(node, {**STARTED, "ray_cluster_head_host": head})
    assert problems == [
        f"ray_cluster_hosts is spark-a, spark-b, which does not hold {outside} (this node or ray_cluster_head_host): run the role "
        "on the cluster's nodes, or set ray_cluster_hosts (sparkinfer_cluster_hosts) to them."
    ]


def test_a_node_and_a_head_both_outside_are_named_together():
    [problem] = setting_problems("spark-c", {**STARTED, "ray_cluster_head_host": "spark-z"})
    assert "does not hold spark-c and spark-z (this node" in problem


@pytest.mark.parametrize(("token", "wrong"), [("two words", True), ("line\nbreak", True), ("caf\u00e9", True), ("Ab3_-.~!", False)])
def test_the_token_is_printable_ascii_and_never_quoted(token, wrong):
    problems = setting_problems("spark-a", {**STARTED, "ray_cluster_auth_token": token})
    assert problems == (["ray_cluster_auth_token holds a space, a line break or a character outside printable ASCII."] if wrong else [])
    assert not any(token in problem for problem in problems)


@pytest.mark.parametrize("path", ["etc/sparkinfer/token", "/etc/sparkinfer/a:/etc/b", "/etc/spark infer/token", ""])
def test_the_token_path_is_a_plain_absolute_path(path):
    assert setting_problems("spark-a", {**STARTED, "ray_cluster_auth_token_path": path}) == [
        f"ray_cluster_auth_token_path is {path}, not a plain absolute path (letters, digits, . _ - and /)."
    ]


def test_the_scrapers_are_ipv4_addresses_and_the_wrong_ones_are_named():
    problems = setting_problems("spark-a", {**STARTED, "ray_cluster_metrics_scrapers": ["10.0.0.5", "10.0.0.0/8", "prometheus"]})
    assert problems == [
        'ray_cluster_metrics_scrapers must list IPv4 addresses (of the Prometheus servers that scrape Ray\'s metrics), not ["10.0.0.0/8", "prometheus"].'
    ]


def test_two_ports_alike_are_refused_with_every_port_listed():
    [problem] = setting_problems("spark-a", {**STARTED, "ray_cluster_node_manager_port": 6379})
    assert problem.startswith(f"{PORTS_OVERLAP}6379, 6379, 6381, 6382, 6383, 6384, 52365, 10001, 44217, 44227, 8265 (ray_cluster_port")
    assert problem.endswith("workers' range ray_cluster_min_worker_port 10002 to ray_cluster_max_worker_port 10999.")


def test_a_worker_range_holding_single_ports_names_them():
    [problem] = setting_problems("spark-a", {**STARTED, "ray_cluster_max_worker_port": 44300})
    assert problem.endswith("ray_cluster_min_worker_port 10002 to ray_cluster_max_worker_port 44300 (which holds 44217, 44227).")


def test_a_worker_range_upside_down_is_refused():
    [problem] = setting_problems("spark-a", {**STARTED, "ray_cluster_min_worker_port": 11000})
    assert problem.startswith(PORTS_OVERLAP)


def test_ports_given_as_text_on_the_command_line_are_judged_as_numbers():
    assert setting_problems("spark-a", {**STARTED, "ray_cluster_port": "6379", "ray_cluster_max_worker_port": "10999"}) == []
    assert setting_problems("spark-a", {**STARTED, "ray_cluster_node_manager_port": "6379"})[0].startswith(PORTS_OVERLAP)


def test_ports_not_all_known_are_left_unjudged():
    partial = {key: value for key, value in STARTED.items() if key != "ray_cluster_dashboard_port"}
    assert setting_problems("spark-a", {**partial, "ray_cluster_node_manager_port": 6379}) == []


@pytest.mark.parametrize(
    ("state", "executor", "judged"),
    [("started", "mp", True), ("auto", "ray", True), ("auto", "mp", False), ("absent", "ray", False), ("auto", None, False)],
)
def test_what_a_running_cluster_needs_is_judged_only_when_ray_runs(state, executor, judged):
    settings = {**STARTED, "ray_cluster_state": state, "vllm_serve_executor": executor, "ray_cluster_image": "", "ray_cluster_port": 6380}
    assert bool(setting_problems("spark-a", settings)) is judged


def test_an_empty_model_and_image_are_refused_with_where_they_come_from():
    problems = setting_problems("spark-a", {**STARTED, "ray_cluster_model": "", "ray_cluster_image": "", "ray_cluster_rdma": False})
    assert [problem.split(",")[0] for problem in problems] == ["ray_cluster_model is empty", "ray_cluster_image is empty: set it (or vllm_image_name"]


def test_a_node_address_that_is_no_ipv4_address_names_the_node():
    assert setting_problems("spark-b", {**STARTED, "ray_cluster_node_ip": ""}) == [
        "ray_cluster_node_ip on spark-b is '', not an IPv4 address: Ray registers the node with its fabric address. Run the "
        "nccl_network role first (playbooks/network.yml publishes nccl_network_host_ip, the default) or set ray_cluster_node_ip."
    ]


def test_mounted_paths_are_plain_and_rdma_devices_count_only_with_rdma():
    problems = setting_problems("spark-a", {**STARTED, "ray_cluster_model": "/opt/models/a:b", "ray_cluster_rdma_devices": ["dev/infiniband"]})
    assert problems == [
        '"/opt/models/a:b", "dev/infiniband" (ray_cluster_model, ray_cluster_rdma_devices): give absolute paths of letters, digits '
        "and /._- only, such as /opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8 and /dev/infiniband."
    ]
    assert setting_problems("spark-a", {**STARTED, "ray_cluster_rdma": False, "ray_cluster_rdma_devices": ["dev/infiniband"]}) == []


@pytest.mark.parametrize(("size", "files"), [("100", 3), ("0m", 3), ("100MB", 3), (100, 3), ("100m", 0)])
def test_the_log_rotation_is_one_docker_takes(size, files):
    [problem] = setting_problems("spark-a", {**STARTED, "ray_cluster_log_max_size": size, "ray_cluster_log_max_files": files})
    assert problem.startswith("ray_cluster_log_max_files is 0" if files == 0 else f"ray_cluster_log_max_size is {size!r}")


# What the ray_cluster scenario reads off a node's INPUT rule with the defaults (extensions/molecule/ray_cluster, DPORTS).
DEFAULT_DPORTS = "6379,6380,6381,6382,6383,6384,52365,10001,10002:10999,44217,44227"


def test_the_firewall_guards_every_port_of_rays_but_the_dashboards_for_the_nodes():
    assert firewall_ports(STARTED) == {"cluster": DEFAULT_DPORTS.split(","), "metrics": []}


def test_with_scrapers_the_metrics_ports_move_to_their_own_chain():
    ports = firewall_ports({**STARTED, "ray_cluster_metrics_scrapers": ["10.0.0.5"]})
    assert ports == {
        "cluster": ["6379", "6380", "6381", "6382", "6383", "52365", "10001", "10002:10999"],
        "metrics": ["6384", "44217", "44227"],
    }


def test_ports_given_as_text_are_guarded_as_numbers():
    assert firewall_ports({**STARTED, "ray_cluster_port": "7000", "ray_cluster_max_worker_port": "10500"})["cluster"][:1] == ["7000"]
    assert "10002:10500" in firewall_ports({**STARTED, "ray_cluster_max_worker_port": "10500"})["cluster"]


def test_the_start_spec_takes_each_port_from_its_variable():
    spec = start_spec(
        {
            **STARTED,
            "ray_cluster_num_gpus": 1,
            "ray_cluster_num_cpus": None,
            "ray_cluster_object_store_memory": 1073741824,
            "ray_cluster_dashboard_enabled": False,
        }
    )
    assert (spec["node_ip"], spec["num_gpus"], spec["num_cpus"], spec["object_store_memory"], spec["dashboard"]) == (
        "192.168.177.11",
        1,
        None,
        1073741824,
        False,
    )
    # The role's defaults, as the `ray start` tests give them.
    assert spec["ports"] == RAY_START_PORTS
    # Every port variable the rules judge but the head's two metrics ports (environment variables, no flag) is given to `ray start`.
    assert set(START_SPEC_PORTS.values()) == set(PORT_VARIABLES) - set(METRICS_PORT_VARIABLES) | {"ray_cluster_min_worker_port", "ray_cluster_max_worker_port"}
