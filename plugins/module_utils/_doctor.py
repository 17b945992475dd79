# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The doctor's findings on one cluster (playbooks/doctor.yml), from what each role's `doctor` entry point read.

A node's reading is a dict with the keys `node`, `members` (its cluster), `host` (gb10_host), `fabric` (nccl_network),
`ray` (ray_cluster) and `vllm` (vllm_serve, the inventory's image among it); the head's also holds what only the head
reads (Ray's view of the cluster, the API's answers, the launch record and the inputs of its launch). Each finding is a dict with `severity` (error,
warning or ok), `area`, `node`, `what`, `evidence` and `fix`; errors come first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ansible_collections.sparkinfer.cluster.plugins.module_utils._fabric import LOOPBACK_ADDRESS, port_condition
from ansible_collections.sparkinfer.cluster.plugins.module_utils._host_rules import host_findings as judge_host
from ansible_collections.sparkinfer.cluster.plugins.module_utils._platform import SEVERITY_OF_VERDICT, judge, platform_of

SEVERITIES = ("error", "warning", "ok")
# Inputs of a launch whose values may hold a secret: a drift names them, never their values.
SECRET_INPUTS = ("vllm_serve_extra_env",)


def error(area: str, node: str, what: str, evidence: str, fix: str) -> dict:
    return {"severity": "error", "area": area, "node": node, "what": what, "evidence": evidence, "fix": fix}


def warning(area: str, node: str, what: str, evidence: str, fix: str) -> dict:
    return {"severity": "warning", "area": area, "node": node, "what": what, "evidence": evidence, "fix": fix}


def ok(area: str, node: str, what: str, evidence: str) -> dict:
    return {"severity": "ok", "area": area, "node": node, "what": what, "evidence": evidence, "fix": ""}


def host_findings(node: str, host: Mapping[str, Any], rank_running: bool, cluster_size: int) -> Iterator[dict]:
    """The host rule table's findings on a live node (module_utils/_host_rules.py), as gb10_host's preflight judges it."""
    for finding in judge_host({**host, "rank_running": rank_running, "cluster_size": cluster_size}, "doctor"):
        evidence = finding["evidence"] + (f" (source: {finding['source']})" if finding["source"] else "")
        yield {**finding, "area": "host", "node": node, "evidence": evidence}


def fabric_findings(node: str, fabric: Mapping[str, Any], peers: Mapping[str, str], alone: bool) -> list[dict]:
    """What is wrong with this node's fabric, or the one finding that it is fine. A node alone in its cluster needs no
    fabric: only what its ranks bind to is judged, and a ConnectX-7 port that is down is no error there."""
    problems = list(_fabric_problems(node, fabric, peers, alone))
    if problems:
        return problems
    env = fabric["env"]
    if alone:
        return [
            ok(
                "fabric",
                node,
                "no fabric needed",
                f"a cluster of one node: its ranks use {env.get('NCCL_SOCKET_IFNAME')} {env.get('VLLM_HOST_IP')}; "
                f"{port_condition(fabric.get('hcas', []), fabric.get('fabric_port', 1))}",
            )
        ]
    # No problem: _fabric_problems found the interface among the netdevs.
    netdev = {netdev["name"]: netdev for netdev in fabric["netdevs"]}[env["NCCL_SOCKET_IFNAME"]]
    return [
        ok(
            "fabric",
            node,
            "fabric",
            f"{netdev['name']} {env['VLLM_HOST_IP']} MTU {netdev.get('mtu')}, {fabric.get('transport')}, "
            f"{len(fabric.get('pings', []))} peer(s) answer unfragmented at the full MTU",
        )
    ]


def _fabric_problems(node: str, fabric: Mapping[str, Any], peers: Mapping[str, str], alone: bool) -> Iterator[dict]:
    env = fabric.get("env")
    if env is None:
        yield error("fabric", node, "no NCCL environment file", f"{fabric.get('env_file')} is missing", "run network.yml")
        return
    if alone and env.get("VLLM_HOST_IP") == LOOPBACK_ADDRESS:
        return
    interface_name = env.get("NCCL_SOCKET_IFNAME", "")
    netdevs = {netdev["name"]: netdev for netdev in fabric.get("netdevs", [])}
    interface = netdevs.get(interface_name)
    host_ip = env.get("VLLM_HOST_IP", "")
    held = (fabric.get("ipv4") or {}).get(interface_name) or ""
    fix_env = "run network.yml to write the environment again, then serve.yml (and cluster.yml with Ray) to restart on it"
    if interface is None:
        interfaces = f"(interfaces: {', '.join(sorted(netdevs))})"
        if interface_name:
            what, evidence = "the NCCL interface is gone", f"{fabric['env_file']} names {interface_name}, which this node no longer has {interfaces}"
        else:
            what, evidence = "no NCCL interface named", f"{fabric['env_file']} sets no NCCL_SOCKET_IFNAME {interfaces}"
        yield error("fabric", node, what, evidence, fix_env)
        return
    if host_ip != held:
        yield error(
            "fabric",
            node,
            "the fabric address changed",
            f"{fabric['env_file']} says VLLM_HOST_IP={host_ip}, {interface_name} holds {held or 'no IPv4 address'}",
            fix_env,
        )
    if alone:
        return
    if interface.get("operstate") not in ("up", "unknown"):
        yield error("fabric", node, "the NCCL interface is down", f"{interface_name} is {interface.get('operstate')}", "check the cable and `ip link`")
    if interface.get("mtu") != fabric.get("mtu_wanted"):
        yield error(
            "fabric",
            node,
            "MTU differs from the fabric's",
            f"{interface_name} has MTU {interface.get('mtu')}, nccl_network_mtu is {fabric.get('mtu_wanted')}",
            "run network.yml (firmware updates reset ConnectX-7 to 1500); both ends need the same MTU",
        )
    yield from _roce_findings(node, fabric, env)
    for ping in fabric.get("pings", []):
        if ping["rc"] != 0:
            yield error(
                "fabric",
                node,
                f"the fabric fails towards {ping['peer']}",
                f"{node} -> {ping['peer']} ({peers.get(ping['peer'], '?')}): {ping['said'] or 'no answer'}",
                "check both ends' MTU (`ip link`), that the cable sits in the same port on both nodes, that the addresses share "
                "their subnets, and that no firewall drops the peer's fabric address; then run network.yml",
            )


def _roce_findings(node: str, fabric: Mapping[str, Any], env: Mapping[str, str]) -> Iterator[dict]:
    if env.get("NCCL_IB_DISABLE", "1") == "1":
        return
    hcas = {hca["name"]: hca for hca in fabric.get("hcas", [])}
    named = [name.split(":")[0] for name in filter(None, env.get("NCCL_IB_HCA", "").split(","))]
    for name in named:
        hca = hcas.get(name)
        if hca is None:
            yield error("fabric", node, f"NCCL names an HCA this node lacks: {name}", f"HCAs: {', '.join(sorted(hcas))}", "run network.yml")
        elif hca.get("state") != "ACTIVE":
            yield error(
                "fabric",
                node,
                f"ConnectX-7 twin {hca['name']} is not up",
                f"{hca['name']} ({hca.get('netdev')}) is {hca.get('state')} ({hca.get('phys_state')})",
                "check that the cable sits in the same port on both nodes and that the peer is powered on",
            )
    pinned = env.get("NCCL_IB_GID_INDEX")
    if pinned is None:
        return
    # NCCL uses the pinned index on every HCA it uses (those NCCL_IB_HCA names, else every active one): an HCA whose
    # RoCE v2 IPv4 GID sits elsewhere fails alone (ibv_modify_qp, errno 61), whatever its twin holds.
    used = [hcas[name] for name in dict.fromkeys(named) if name in hcas] if named else list(hcas.values())
    lacking = {}
    for hca in used:
        indices = [str(gid["index"]) for gid in hca.get("roce_v2_ipv4_gids") or []]
        if hca.get("state") == "ACTIVE" and pinned not in indices:
            lacking[hca["name"]] = ", ".join(indices) or "no index"
    if lacking:
        yield error(
            "fabric",
            node,
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            f"NCCL_IB_GID_INDEX={pinned}, RoCE v2 IPv4 GIDs at " + "; ".join(f"{indices} on {name}" for name, indices in lacking.items()),
            "unset nccl_network_ib_gid_index (NCCL picks each HCA's GID itself; indices drift) and run network.yml",
        )


def _reading_of(node: str, nodes: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    return {reading["node"]: reading for reading in nodes}[node]


def image_findings(nodes: Sequence[Mapping[str, Any]]) -> Iterator[dict]:
    images = {reading["node"]: reading["vllm"]["image"] for reading in nodes}
    name = next((image["name"] for image in images.values() if image.get("name")), "")
    if not name:
        return
    missing = sorted(node for node, image in images.items() if not image.get("id"))
    for node in missing:
        yield error("image", node, "the image is missing", f"{name} is not on {node}", "run image.yml")
    ids = {image["id"] for image in images.values() if image.get("id")}
    if len(ids) > 1:
        yield error(
            "image",
            "cluster",
            "the nodes hold different images",
            ", ".join(f"{node} {image['id'][:19]}" for node, image in sorted(images.items()) if image.get("id")),
            "run image.yml: it copies the head's image to the workers",
        )
    elif ids and not missing:
        yield ok("image", "cluster", "same image on every node", f"{name} {sorted(ids)[0][:19]}")
    for reading in nodes:
        image = reading["vllm"]["image"]
        if image.get("lacks"):
            yield error(
                "image",
                reading["node"],
                "the image lacks the served architecture",
                image["lacks"],
                "set vllm_image_name to an image that holds it, then run image.yml and serve.yml (or rollout.yml)",
            )
        if image.get("unprobed"):
            yield warning(
                "image",
                reading["node"],
                "the image's model classes were never read",
                f"no probe of {name} {image.get('id', '')[:19]} is kept on {reading['node']}",
                "run image.yml: its gate reads them and keeps the answer",
            )
        running = (reading["vllm"].get("container") or {}).get("image_id")
        wanted = image.get("id")
        if running and wanted and running != wanted and reading["vllm"]["container"].get("status") == "running":
            yield warning(
                "image",
                reading["node"],
                "the server runs another image than the inventory's",
                f"running {running[:19]}, {name} is {wanted[:19]}",
                "run serve.yml (or rollout.yml for a fleet) to restart on the inventory's image",
            )


def image_platform_findings(head: Mapping[str, Any]) -> Iterator[dict]:
    """The platform table's image rows on the head: the CUDA compat driver its image carries over its own driver (the
    image probe kept on the head says; an image never probed there has no such row)."""
    image = head["vllm"].get("image") or {}
    facts = {"driver_version": head["host"].get("driver_version"), "compat_driver_version": image.get("compat_driver_version")}
    for row in judge(platform_of(facts), ["image"]):
        evidence = row["what"] + (f" (source: {row['source']})" if row["source"] else "")
        yield {
            "severity": SEVERITY_OF_VERDICT[row["verdict"]],
            "area": "image",
            "node": head["node"],
            "what": row["title"],
            "evidence": evidence,
            "fix": row["fix"],
        }


def ray_findings(head: str, nodes: Sequence[Mapping[str, Any]]) -> Iterator[dict]:
    if not any(reading["ray"].get("expected") for reading in nodes):
        return
    view = _reading_of(head, nodes)["ray"].get("cluster") or {}
    states = {entry.get("node_id"): entry.get("state") for entry in view.get("nodes", []) if entry.get("node_id")}
    healthy = True
    for reading in nodes:
        ray, node = reading["ray"], reading["node"]
        status = ray.get("status", "absent")
        if status != "running":
            healthy = False
            yield error(
                "ray",
                node,
                f"the Ray container is {status}",
                f"{ray.get('container')} is {status}" + (f" (exit code {ray['exit_code']})" if ray.get("exit_code") else ""),
                "run cluster.yml: it starts the node's Ray container again and waits until it rejoins the head",
            )
        elif not ray.get("raylet_node_id"):
            healthy = False
            yield error("ray", node, "no Ray raylet", ray.get("raylet_problem") or "no raylet answers in the container", "run cluster.yml")
        elif view and states.get(ray["raylet_node_id"]) != "ALIVE":
            healthy = False
            yield error(
                "ray",
                node,
                "not ALIVE in the head's Ray cluster",
                f"raylet {ray['raylet_node_id'][:12]} is {states.get(ray['raylet_node_id'], 'not listed')} there",
                "run cluster.yml: it restarts the worker's Ray container against the head",
            )
        if ray.get("firewall_wanted") and ray.get("firewall_guards") is False:
            healthy = False
            yield error(
                "ray",
                node,
                "Ray's ports are open to every network",
                f"INPUT {_of_families(ray)}sends nothing to the chain SPARKINFER-RAY, which lets only the cluster's nodes reach Ray",
                "run cluster.yml: its firewall phase puts the chain and its jump back",
            )
    if healthy:
        yield ok("ray", "cluster", "Ray", f"{view.get('node_count', '?')} node(s) alive, {view.get('dead_nodes', 0)} dead")


def _of_families(reading: Mapping[str, Any]) -> str:
    """Which INPUT chains lack the jump ("of ip6tables "), where the reading names them (readings before IPv6 did not)."""
    families = reading.get("firewall_open") or []
    return f"of {' and '.join(families)} " if families else ""


def vllm_findings(head: str, nodes: Sequence[Mapping[str, Any]]) -> Iterator[dict]:
    head_vllm = _reading_of(head, nodes)["vllm"]
    record = head_vllm.get("record") or {}
    if not record:
        yield error("vllm", head, "no vLLM server was launched", f"{head} has no launch record", "run site.yml, or serve.yml")
        return
    for reading in nodes:
        if reading["node"] in record.get("ranks", []):
            yield from _rank_findings(reading["node"], reading["vllm"], reading["host"].get("boot_time"))
    yield from _api_findings(head, head_vllm, record)
    if head_vllm.get("firewall_wanted") and head_vllm.get("firewall_guards") is False:
        yield error(
            "vllm",
            head,
            "the mp rendezvous port is open to every network",
            f"INPUT {_of_families(head_vllm)}sends nothing to the chain {head_vllm.get('firewall_chain')}, which lets only the "
            "cluster's nodes reach PyTorch's TCPStore (it authenticates nobody)",
            "run serve.yml: its firewall phase puts the chain and its jump back",
        )


def _rank_findings(node: str, vllm: Mapping[str, Any], booted_at: float | None) -> Iterator[dict]:
    container, log = vllm.get("container") or {}, vllm.get("log") or {}
    status = container.get("status", "absent")
    failure = log.get("error")
    if failure:
        yield error("vllm", node, f"vLLM failed: {failure['category']}", failure.get("line") or "", failure.get("hint") or "")
    started_at = docker_time(container.get("started_at"))
    if status != "running" and booted_at and started_at and started_at < booted_at:
        yield error(
            "vllm",
            node,
            "the node rebooted under the vLLM server",
            f"{node} booted at {_utc(booted_at)}, after {container.get('name')} started at {_utc(started_at)}; it is {status} "
            f"(exit code {container.get('exit_code')})",
            "Docker does not start a vLLM rank again, by design (a crashed rank stays down for its log to be read, and a rank "
            "alone cannot rejoin the others): run serve.yml, which starts every rank again and gates on vLLM's log",
        )
    elif status != "running":
        why = f"exit code {container.get('exit_code')}" + (", killed for lack of memory" if container.get("oom_killed") else "")
        yield error(
            "vllm",
            node,
            f"the vLLM rank is {status}",
            f"{container.get('name')} is {status}" + (f" ({why})" if status == "exited" else ""),
            "run serve.yml: it starts every rank again and gates on vLLM's log",
        )
    elif container.get("restart_count"):
        yield warning(
            "vllm",
            node,
            "the vLLM rank restarted",
            f"{container.get('name')} restarted {container['restart_count']} time(s)",
            f"read why in `docker logs {container.get('name')}` on {node}",
        )
    elif not failure:
        yield ok("vllm", node, "vLLM rank running", f"{container.get('name')}, log at {log.get('stage', '?')}")


def docker_time(stamp: str | None) -> float | None:
    """Seconds since the epoch of a time Docker's inspect gives (2026-12-07T08:11:58.123456789Z); None for none, or
    for Docker's zero time (0001-01-01T00:00:00Z: never started)."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", stamp or "")
    if match is None or match.group(1).startswith("0001-"):
        return None
    whole = datetime.fromisoformat(match.group(1) + match.group(3).replace("Z", "+00:00"))
    return whole.timestamp() + float(f"0.{match.group(2) or 0}")


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def api_reading(answers: Sequence[Mapping[str, Any]]) -> dict:
    """What the API answered the doctor's GET /health and GET /v1/models (two uri results, in that order): each status,
    the models it lists and the second request's message; {} when it was not asked both."""
    asked = [answer for answer in answers if "status" in answer]
    if len(asked) < 2:
        return {}
    health, models = answers[0], answers[1]
    listed = (models.get("json") or {}).get("data") or [] if isinstance(models.get("json"), Mapping) else []
    return {
        "health_status": health["status"],
        "models_status": models["status"],
        "problem": models.get("msg") or "",
        "models": [model.get("id") for model in listed if isinstance(model, Mapping)],
    }


def _api_findings(head: str, vllm: Mapping[str, Any], record: Mapping[str, Any]) -> Iterator[dict]:
    log, api = vllm.get("log") or {}, vllm.get("api") or {}
    if log and log.get("outcome") != "ready" and not log.get("error"):
        yield error(
            "vllm",
            head,
            "vLLM is not ready",
            f"vLLM's log shows {log.get('outcome')} at {log.get('stage')}",
            "run serve.yml: its gate waits for the start-up and names a failure",
        )
    answers = f"/health {api.get('health_status')}, /v1/models {api.get('models_status')}"
    served = record.get("served_model_name")
    if api.get("health_status") != 200 or api.get("models_status") != 200:
        key_differs = 401 in (api.get("health_status"), api.get("models_status"))
        yield error(
            "vllm",
            head,
            "the API does not answer",
            f"{record.get('endpoint')}: {answers} {api.get('problem', '')}".strip(),
            "the API key differs from the server's: run serve.yml with the key it was started with"
            if key_differs
            else "run serve.yml: it restarts the server and smoke-tests it",
        )
    elif served not in api.get("models", []):
        yield error(
            "vllm",
            head,
            "the API does not list the served model",
            f"{answers}, listing {', '.join(api.get('models', [])) or 'nothing'}, not {served}",
            "run serve.yml",
        )
    else:
        yield ok("vllm", head, "API answers", f"{record.get('endpoint')} serving {served}; {vllm.get('metrics_line', 'metrics unread')}")


def drift_findings(head: str, nodes: Sequence[Mapping[str, Any]]) -> Iterator[dict]:
    inputs = _reading_of(head, nodes)["vllm"].get("inputs") or {}
    current, wanted = inputs.get("current") or {}, inputs.get("wanted") or {}
    if not current:
        return
    differing = sorted(name for name in wanted if current.get(name) != wanted[name])
    for name in differing:
        evidence = "differs from the inventory" if name in SECRET_INPUTS else f"the server runs {current.get(name)!r}, the inventory asks {wanted[name]!r}"
        yield warning("drift", head, f"{name} differs from the inventory", evidence, "run rollout.yml (or serve.yml) to launch what the inventory asks")
    if not differing:
        yield ok("drift", head, "the server runs what the inventory asks", f"{len(wanted)} launch inputs compared")


def inventory_findings(members: Sequence[str], inventory: Mapping[str, Sequence[str]]) -> list[dict]:
    """The inventory's values on the cluster's nodes, by the rules validate_inventory.yml refuses with (each problem its
    own sentence, which says what to set), or one finding that they pass."""
    found = [
        error("inventory", node, problem, "the inventory's value, by the rules validate_inventory.yml judges", "fix it in the inventory, then run site.yml")
        for node in members
        for problem in inventory.get(node, ())
    ]
    return found or [ok("inventory", members[0], "the inventory's values pass the rules validate_inventory.yml judges", f"{len(members)} node(s) judged")]


def cluster_findings(
    head: str, members: Sequence[str], readings: Sequence[Mapping[str, Any]], inventory: Mapping[str, Sequence[str]] | None = None
) -> list[dict]:
    """Every finding on the cluster of this head and its members, from the readings of the members that could be read
    and, given the inventory's problems node by node, from those: errors first, then warnings, then what is fine."""
    found = [
        error("node", member, "the node could not be read", "unreachable, or a read failed (see the play's output above)", "check SSH to it and sudo")
        for member in members
        if member not in {reading["node"] for reading in readings}
    ]
    if inventory is not None:
        found += inventory_findings(members, inventory)
    nodes = [reading for reading in readings if reading["node"] in members]
    if head not in {reading["node"] for reading in nodes}:
        return found
    peers = {reading["node"]: reading["fabric"].get("host_ip", "") for reading in nodes}
    for reading in nodes:
        rank_running = (reading["vllm"].get("container") or {}).get("status") == "running"
        found += host_findings(reading["node"], reading["host"], rank_running, len(members))
        found += fabric_findings(reading["node"], reading["fabric"], peers, alone=len(members) == 1)
    found += image_findings(nodes)
    found += image_platform_findings(_reading_of(head, nodes))
    found += ray_findings(head, nodes)
    found += vllm_findings(head, nodes)
    found += drift_findings(head, nodes)
    return sorted(found, key=lambda entry: SEVERITIES.index(entry["severity"]))
