# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What ray_cluster's argument specification cannot say of its variables, in one table: ray_cluster's preflight refuses
on it, and validate_inventory.yml judges the same rules on what the inventory sets before any host changes.

The rules read the variables by their full names; a variable the mapping lacks (the inventory did not set it) leaves its
rules unjudged, and a value of the wrong type is the argument specification's to name. The token is never quoted.
No I/O here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping

from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_log_settings import docker_log_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ipv4 import is_ipv4_address

# Ray's single ports: each distinct, and none in the workers' range. The last two have no `ray start` flag (the head's
# autoscaler and dashboard metrics); the dashboard binds to loopback only, but its port must be free too.
PORT_VARIABLES = (
    "ray_cluster_port",
    "ray_cluster_node_manager_port",
    "ray_cluster_object_manager_port",
    "ray_cluster_dashboard_agent_grpc_port",
    "ray_cluster_runtime_env_agent_port",
    "ray_cluster_metrics_export_port",
    "ray_cluster_dashboard_agent_listen_port",
    "ray_cluster_client_server_port",
    "ray_cluster_autoscaler_metrics_port",
    "ray_cluster_dashboard_metrics_port",
    "ray_cluster_dashboard_port",
)
# The single ports other nodes reach (the first eight of PORT_VARIABLES), and the head's metrics ports, which have no
# `ray start` flag. The dashboard is no port of the firewall's: it is bound to 127.0.0.1 only.
NODE_PORT_VARIABLES = PORT_VARIABLES[:8]
METRICS_PORT_VARIABLES = PORT_VARIABLES[8:10]
# The `ray start` spec's ports (module_utils/_ray_start.py) and the variables that set them.
START_SPEC_PORTS = {
    "gcs": "ray_cluster_port",
    "client_server": "ray_cluster_client_server_port",
    "dashboard": "ray_cluster_dashboard_port",
    "node_manager": "ray_cluster_node_manager_port",
    "object_manager": "ray_cluster_object_manager_port",
    "dashboard_agent_grpc": "ray_cluster_dashboard_agent_grpc_port",
    "dashboard_agent_listen": "ray_cluster_dashboard_agent_listen_port",
    "runtime_env_agent": "ray_cluster_runtime_env_agent_port",
    "metrics_export": "ray_cluster_metrics_export_port",
    "min_worker": "ray_cluster_min_worker_port",
    "max_worker": "ray_cluster_max_worker_port",
}
_PRINTABLE = re.compile(r"[!-~]*")
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9._/-]+")


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def _started(settings: Mapping) -> bool:
    """Whether the Ray containers run: ray_cluster_state started, or auto with vLLM's Ray executor."""
    state = settings.get("ray_cluster_state", "auto")
    return state == "started" or (state == "auto" and settings.get("vllm_serve_executor") == "ray")


def _hosts(node: str, settings: Mapping) -> Iterator[str]:
    hosts, head = settings.get("ray_cluster_hosts"), settings.get("ray_cluster_head_host")
    if not isinstance(hosts, list):
        return
    outside = [name for name in dict.fromkeys((node, head)) if isinstance(name, str) and name not in hosts]
    if outside:
        yield (
            f"ray_cluster_hosts is {', '.join(map(str, hosts))}, which does not hold {' and '.join(outside)} (this node or "
            "ray_cluster_head_host): run the role on the cluster's nodes, or set ray_cluster_hosts (sparkinfer_cluster_hosts) to them."
        )


def _token(node: str, settings: Mapping) -> Iterator[str]:
    token, path = settings.get("ray_cluster_auth_token"), settings.get("ray_cluster_auth_token_path")
    if isinstance(token, str) and not _PRINTABLE.fullmatch(token):
        yield "ray_cluster_auth_token holds a space, a line break or a character outside printable ASCII."
    if isinstance(path, str) and not _PLAIN_PATH.fullmatch(path):
        yield f"ray_cluster_auth_token_path is {path}, not a plain absolute path (letters, digits, . _ - and /)."


def _scrapers(node: str, settings: Mapping) -> Iterator[str]:
    scrapers = settings.get("ray_cluster_metrics_scrapers")
    wrong = [scraper for scraper in scrapers if not is_ipv4_address(scraper)] if isinstance(scrapers, list) else []
    if wrong:
        yield f"ray_cluster_metrics_scrapers must list IPv4 addresses (of the Prometheus servers that scrape Ray's metrics), not {json.dumps(wrong)}."


def _ports(node: str, settings: Mapping) -> Iterator[str]:
    ports = [_int(settings.get(name)) for name in PORT_VARIABLES]
    low, high = _int(settings.get("ray_cluster_min_worker_port")), _int(settings.get("ray_cluster_max_worker_port"))
    if not _started(settings) or None in ports or low is None or high is None:
        return
    in_range = [port for port in ports if port is not None and low <= port <= high]
    if low > high or len(set(ports)) < len(ports) or in_range:
        held = f" (which holds {', '.join(map(str, in_range))})" if in_range else ""
        yield (
            f"Ray's ports overlap: {', '.join(map(str, ports))} (ray_cluster_port, the ray_cluster_*_port variables and "
            f"ray_cluster_dashboard_port) must be distinct and outside the workers' range ray_cluster_min_worker_port {low} to "
            f"ray_cluster_max_worker_port {high}{held}."
        )


def _what_runs(node: str, settings: Mapping) -> Iterator[str]:
    if not _started(settings):
        return
    if settings.get("ray_cluster_model") == "":
        yield (
            "ray_cluster_model is empty, so the Ray containers would mount no model and vLLM's Ray workers could not load it: set "
            "sparkinfer_recipe (whose model's directory is the default), vllm_serve_model or vllm_image_model_path, or "
            "ray_cluster_model itself, to the model directory the head serves."
        )
    if settings.get("ray_cluster_image") == "":
        yield "ray_cluster_image is empty: set it (or vllm_image_name, its default) to the vLLM image with Ray that the vllm_image role put on every node."
    address = settings.get("ray_cluster_node_ip")
    if isinstance(address, str) and not is_ipv4_address(address):
        yield (
            f"ray_cluster_node_ip on {node} is '{address}', not an IPv4 address: Ray registers the node with its fabric address. Run "
            "the nccl_network role first (playbooks/network.yml publishes nccl_network_host_ip, the default) or set ray_cluster_node_ip."
        )


def _mounted_paths(node: str, settings: Mapping) -> Iterator[str]:
    model, devices = settings.get("ray_cluster_model"), settings.get("ray_cluster_rdma_devices")
    paths = [model] if isinstance(model, str) and model else []
    if settings.get("ray_cluster_rdma") is True and isinstance(devices, list):
        paths += devices
    wrong = [path for path in paths if not (isinstance(path, str) and _PLAIN_PATH.fullmatch(path))]
    if _started(settings) and wrong:
        yield (
            f"{', '.join(map(json.dumps, wrong))} (ray_cluster_model, ray_cluster_rdma_devices): give absolute paths of letters, "
            "digits and /._- only, such as /opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8 and /dev/infiniband."
        )


def _docker_log(node: str, settings: Mapping) -> Iterator[str]:
    return docker_log_problems("ray_cluster_", settings)


RULES: tuple[Callable[[str, Mapping], Iterator[str]], ...] = (_hosts, _token, _scrapers, _ports, _what_runs, _mounted_paths, _docker_log)


def firewall_ports(settings: Mapping) -> dict[str, list[str]]:
    """The TCP ports each of the role's two chains guards, as iptables' multiport takes them: "cluster", Ray's ports
    for the cluster's nodes (the workers' range as MIN:MAX; at most 15, a range counting 2: these are 12); "metrics", with
    metrics scrapers, the three metrics ports, which that chain opens to the scrapers too ([] without scrapers)."""
    node = [int(settings[name]) for name in NODE_PORT_VARIABLES]
    metrics = [int(settings[name]) for name in METRICS_PORT_VARIABLES]
    scraped = [int(settings["ray_cluster_metrics_export_port"]), *metrics] if settings.get("ray_cluster_metrics_scrapers") else []
    workers = f"{int(settings['ray_cluster_min_worker_port'])}:{int(settings['ray_cluster_max_worker_port'])}"
    cluster = [str(port) for port in node if port not in scraped] + [workers] + [str(port) for port in metrics if port not in scraped]
    return {"cluster": cluster, "metrics": [str(port) for port in scraped]}


def start_spec(settings: Mapping) -> dict:
    """The `ray start` spec of a node (module_utils/_ray_start.py checks its values) from the role's variables."""
    return {
        "node_ip": settings["ray_cluster_node_ip"],
        "num_gpus": settings["ray_cluster_num_gpus"],
        "num_cpus": settings["ray_cluster_num_cpus"],
        "object_store_memory": settings["ray_cluster_object_store_memory"],
        "dashboard": settings["ray_cluster_dashboard_enabled"],
        "ports": {key: settings[name] for key, name in START_SPEC_PORTS.items()},
    }


def setting_problems(node: str, settings: Mapping) -> list[str]:
    """One sentence per problem of ray_cluster's variables on a node, in the table's order."""
    return [problem for rule in RULES for problem in rule(node, settings)]
