#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: ray_cluster_info
short_description: Read a Ray cluster's nodes, resources and demands from its head container, and check the expected nodes
version_added: 0.1.0
description:
  - Runs C(ray status -v) inside the Ray head's container (C(docker exec)), and C(ray list nodes --format json)
    when O(list_nodes) is true, and returns one view of the cluster as RV(ray_cluster) - the nodes with their
    IP, state (C(ALIVE), C(DEAD)), head flag and resources; the cluster's totals and usage; pending nodes;
    recent failures; the tasks, actors and placement groups waiting for resources nobody has free.
  - Reads the layouts C(ray status) has had up to Ray 2.60 (C(Healthy) or C(Active)/C(Idle); C(Usage), C(Total Usage);
    C(Demands), C(Total Demands), C(Pending Demands); per-node blocks named by IP, node id or instance id) and
    the JSON, YAML and table forms of C(ray list nodes).
  - With O(expected_nodes), fails naming each expected IP that no ALIVE node has, with what to check. With
    O(required_resources), fails naming each ALIVE node with less of a resource than required.
  - C(ray status) names nodes only by node type (C(node_<id>) for nodes started with C(ray start)); node IPs
    and states come from the state API (C(ray list nodes)), which needs the Ray dashboard. Without it the
    module still counts the ALIVE nodes and fails when fewer than O(expected_nodes) are alive, but cannot
    say which are missing; RV(ray_cluster.state_api_error) says why the state API did not answer.
  - "Read-only: C(changed) is always false."
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
options:
  container:
    description:
      - The Docker container that runs the Ray head (C(ray start --head)); the commands run in it with
        C(docker exec).
      - Exactly one of O(container) and O(output) is required.
    type: str
  docker_path:
    description: The C(docker) client executable, a name looked up on the PATH or an absolute path.
    type: str
    default: docker
  address:
    description:
      - The Ray cluster's address (the head's GCS, V(192.168.177.11:6379)), passed as C(--address).
      - Without it Ray finds the cluster started in the container itself.
    type: str
  verbose:
    description:
      - Run C(ray status -v), whose per-node blocks give each node's resources even without the state API.
    type: bool
    default: true
  list_nodes:
    description:
      - Also run C(ray list nodes --format json) for node IPs, states and the head. A failure of it (the
        dashboard off) is not an error; RV(ray_cluster.state_api_error) says what happened.
    type: bool
    default: true
  expected_nodes:
    description:
      - The IPs every node should have registered with (their fabric addresses, as given to
        C(ray start --node-ip-address) or C(RAY_NODE_IP_ADDRESS)). The module fails when any is not ALIVE
        (see O(fail_on_problems)).
    type: list
    elements: str
    default: []
  required_resources:
    description:
      - "Resources each ALIVE node (each of O(expected_nodes) when given) must have at least, such as
        V({GPU: 1}). Memory resources (C(memory), C(object_store_memory)) are in bytes."
      - Where no node's own resources are known, the cluster's totals are checked against these
        amounts times the number of expected nodes.
    type: dict
    default: {}
  fail_on_problems:
    description:
      - Fail when an expected node is missing or a node lacks a required resource (RV(problems) says which).
      - With V(false) the module reports the same RV(problems), RV(missing_nodes) and RV(lacking_resources) and succeeds,
        for a reading that decides what to do next (start a worker, or skip a wait the reading already answers).
    type: bool
    default: true
  output:
    description:
      - Text C(ray status) printed, parsed instead of running a command (offline use, tests).
    type: str
  nodes_output:
    description:
      - Text C(ray list nodes) printed (JSON, YAML or the table), parsed with O(output).
    type: str
  command_timeout:
    description:
      - Seconds each C(docker exec) may run; it runs under C(timeout(1)) from coreutils, which stops the C(docker)
        client then. The default leaves room for Ray's own wait for a GCS that does not answer (about 40 s with
        Ray 2.60), whose error names the cause better.
      - A C(ray status) that does not finish in time fails the module, naming the command; a C(ray list nodes) that
        does not is reported in RV(ray_cluster.state_api_error), like any failure of the state API.
    type: int
    default: 120
notes:
  - Commands run with C(LC_ALL=C), both the C(docker) client and the commands in the container.
  - "O(command_timeout) stops the C(docker) client; C(docker exec) does not pass that on, so a C(ray) command
    still running in the container ends on its own (C(ray status) gives up on a GCS that does not answer)."
  - C(ray status -v) is a hidden option Ray marks experimental; set O(verbose=false) for a Ray whose
    C(ray status) refuses it.
  - C(docker exec) needs access to the Docker socket; run the module as root (C(become)) or as a member
    of the C(docker) group.
seealso:
  - name: ray status and ray list nodes
    description: The Ray CLI commands this module reads.
    link: https://docs.ray.io/en/latest/cluster/cli.html
"""

EXAMPLES = r"""
- name: Read the Ray cluster from its head container
  sparkinfer.cluster.ray_cluster_info:
    container: ray-head
  register: __ray

- name: Wait until both Sparks are in the cluster with a GPU each
  sparkinfer.cluster.ray_cluster_info:
    container: ray-head
    address: 192.168.177.11:6379
    expected_nodes:
      - 192.168.177.11
      - 192.168.177.12
    required_resources:
      GPU: 1
  register: __ray
  until: __ray is succeeded
  retries: 30
  delay: 5

- name: Read which nodes are in the cluster without failing on a missing one
  sparkinfer.cluster.ray_cluster_info:
    container: ray-head
    expected_nodes:
      - 192.168.177.11
      - 192.168.177.12
    fail_on_problems: false
  register: __ray_seen

- name: Fail when placement groups wait for resources the cluster lacks
  ansible.builtin.assert:
    that:
      - __ray.ray_cluster.placement_group_demands | length == 0
    fail_msg: "placement groups are waiting: {{ __ray.ray_cluster.placement_group_demands }}"

- name: Parse a saved ray status
  sparkinfer.cluster.ray_cluster_info:
    output: "{{ lookup('ansible.builtin.file', 'ray-status.txt') }}"
"""

RETURN = r"""
ray_cluster:
  description: The cluster as C(ray status) and (when it answered) the state API show it.
  returned: always
  type: dict
  contains:
    available:
      description: False when the autoscaler had not reported yet (C(No cluster status.)); then there are no nodes.
      type: bool
      returned: always
      sample: true
    message:
      description: What C(ray status) printed instead of a report, or null.
      type: str
      returned: always
      sample: null
    timestamp:
      description: The report's time, as its header prints it.
      type: str
      returned: always
      sample: "2026-12-02 18:28:13.724197"
    node_count:
      description: How many nodes are ALIVE (active or idle).
      type: int
      returned: always
      sample: 2
    alive_ips:
      description: The IPs of the ALIVE nodes whose IP is known, sorted.
      type: list
      elements: str
      returned: always
      sample: [192.168.177.11, 192.168.177.12]
    node_ips_known:
      description: Whether every ALIVE node's IP is known (from the state API, or a per-node block named by IP).
      type: bool
      returned: always
      sample: true
    head_ip:
      description: The IP of the ALIVE head node, when the state API said which it is.
      type: str
      returned: always
      sample: 192.168.177.11
    dead_nodes:
      description: How many nodes the state API lists as DEAD (stale entries of earlier workers, or crashed ones).
      type: int
      returned: always
      sample: 0
    nodes:
      description:
        - One entry per node, in the state API's order, then the nodes only C(ray status) names.
        - C(resources) holds each resource's total (memory resources in bytes, without Ray's C(node:<ip>)
          markers); C(usage) the verbose report's used and total figures.
      type: list
      elements: dict
      returned: always
      sample:
        - node_id: 9cf423774874bf1648c1114fdad9f290243e79054aa18eea9ac9a16a
          ip: 192.168.177.11
          state: ALIVE
          state_message: null
          is_head: true
          node_type: node_9cf423774874bf1648c1114fdad9f290243e79054aa18eea9ac9a16a
          resources: {CPU: 20.0, GPU: 1.0, memory: 88046829568, object_store_memory: 10447507865}
          usage: {GPU: {used: 0.0, total: 1.0, placement_group_used: null, placement_group_reserved: null}}
          idle_ms: null
          activity: []
    node_groups:
      description: The report's C(active) and C(idle) lines, each a C(count) of a C(node_type) (with C(node_id) for C(node_<id>)).
      type: dict
      returned: always
    totals:
      description: The cluster's total of each resource (memory resources in bytes).
      type: dict
      returned: always
      sample: {CPU: 40.0, GPU: 2.0, memory: 234966923346, object_store_memory: 20895015895}
    usage:
      description: The cluster's use of each resource, C(used) and C(total), with what placement groups reserve and use.
      type: dict
      returned: always
    pending_nodes:
      description: Nodes being set up by an autoscaler (C(address), C(node_type), C(status)).
      type: list
      elements: dict
      returned: always
    pending_launches:
      description: Nodes an autoscaler is launching (C(node_type), C(count)).
      type: list
      elements: dict
      returned: always
    failures:
      description: Recent failures (C(node_type), C(category) such as C(NodeTerminated) or C(LaunchFailed), C(ip) or C(instance_id)).
      type: list
      elements: dict
      returned: always
    demands:
      description: Tasks and actors waiting for a resource shape (C(bundle), C(count), C(placement_group_count)).
      type: list
      elements: dict
      returned: always
      sample: [{bundle: {CPU: 1.0, GPU: 1.0}, count: 1, placement_group_count: null}]
    placement_group_demands:
      description: Placement groups waiting to be placed (C(bundles), each a C(bundle) and C(count); C(strategy); C(count)).
      type: list
      elements: dict
      returned: always
      sample: [{bundles: [{bundle: {GPU: 1.0}, count: 2}], strategy: PACK, count: 1}]
    resource_requests:
      description: Standing C(request_resources()) constraints (C(bundle), C(count)).
      type: list
      elements: dict
      returned: always
    state_api:
      description: Whether C(ray list nodes) answered with the node list.
      type: bool
      returned: always
      sample: true
    state_api_error:
      description: Why C(ray list nodes) gave no node list (the dashboard off, most often), or null.
      type: str
      returned: always
      sample: null
missing_nodes:
  description: The O(expected_nodes) no ALIVE node has; empty when node IPs are unknown (see RV(missing_node_count)).
  returned: always
  type: list
  elements: str
  sample: [192.168.177.12]
missing_node_count:
  description: How many O(expected_nodes) are not in the cluster; counted from the ALIVE nodes when their IPs are unknown.
  returned: always
  type: int
  sample: 1
lacking_resources:
  description:
    - ALIVE nodes with less of a resource than O(required_resources) (C(scope) C(node), with C(node_id) and C(ip)),
      or the cluster's totals short of it (C(scope) C(cluster)); C(resource), C(required), C(available).
  returned: always
  type: list
  elements: dict
  sample: []
problems:
  description: What is wrong, each with what to check; empty when nothing is (always, unless O(fail_on_problems=false)).
  returned: always
  type: list
  elements: str
  sample: []
cmd:
  description: The commands that ran, each an argument vector (with the C(timeout) wrapper); empty when O(output) was given.
  returned: always
  type: list
  elements: list
"""

import math
import time
from collections.abc import Callable

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import bounded_argv, timed_out, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_cluster_facts import NodeCheck, check_nodes, cluster_facts
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_hints import CHECK_NODE, diagnose, resource_hint, silent_head_hint
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_nodes import parse_ray_nodes
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_status import parse_ray_status
from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_text import MEMORY_RESOURCES, RayStatusParseError


def _error_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    error = next((line for line in reversed(lines) if line.startswith(("Error", "ray.exceptions.", "ConnectionError", "OCI runtime"))), None)
    return (error or (lines[-1] if lines else "no output"))[:400]


def _amount(resource: str, value: float) -> str:
    if resource in MEMORY_RESOURCES:
        return f"{value / (1 << 30):.2f} GiB of {resource}"
    return f"{value:g} {resource}"


class RayClusterInfo:
    def __init__(self, module: AnsibleModule, clock: Callable[[], float]) -> None:
        self.module = module
        self.clock = clock
        self.params = module.params
        self.cmd: list[list[str]] = []

    def _ray(self, docker: str, *args: str) -> tuple[int, str, str, str | None]:
        """Run `docker exec CONTAINER ray ARGS` under timeout(1): rc, stdout, stderr, and the timeout's error or None."""
        argv = [docker, "exec", "-e", "LC_ALL=C", self.params["container"], "ray", *args]
        if self.params["address"]:
            argv += ["--address", self.params["address"]]
        seconds = self.params["command_timeout"]
        bounded = bounded_argv(self.module.get_bin_path("timeout", required=True), seconds, argv)
        self.cmd.append(bounded)
        started = self.clock()
        rc, out, err = self.module.run_command(bounded, environ_update={"LC_ALL": "C"})
        stopped = timed_out(rc, self.clock() - started, seconds)
        return rc, out, err, timeout_message(argv, seconds) if stopped else None

    def read(self) -> tuple[str, str | None, str | None]:
        """The status text, the node list text (or None) and why there is no node list (or None)."""
        if self.params["output"] is not None:
            return self.params["output"], self.params["nodes_output"], None
        name = self.params["docker_path"]
        docker = self.module.get_bin_path(name)
        if docker is None:
            self.module.fail_json(msg=f"{name} not found: the Docker client is not installed", cmd=self.cmd)
        container = self.params["container"]
        rc, out, err, stopped = self._ray(docker, "status", *(["-v"] if self.params["verbose"] else []))
        if stopped:
            hint = silent_head_hint(container)
            self.module.fail_json(msg=f"{stopped}: {hint}", rc=rc, stdout=out, stderr=err, cmd=self.cmd, problems=[hint])
        if rc != 0:
            text = f"{out}\n{err}"
            found = diagnose(text)
            reason = found[1] if found else "see its output"
            self.module.fail_json(
                msg=f"`ray status` failed in container {container} (rc={rc}): {reason}: {_error_line(text)}",
                rc=rc,
                stdout=out,
                stderr=err,
                cmd=self.cmd,
                problems=[reason],
            )
        if not self.params["list_nodes"]:
            return out, None, None
        rc, nodes_out, nodes_err, stopped = self._ray(docker, "list", "nodes", "--format", "json")
        if stopped:
            return out, None, f"{stopped}: the state API did not answer in time"
        if rc != 0:
            text = f"{nodes_out}\n{nodes_err}"
            found = diagnose(text)
            return out, None, f"{found[1] if found else 'ray list nodes failed'} (rc={rc}: {_error_line(text)})"
        return out, nodes_out, None

    def problems(self, facts: dict, check: NodeCheck, expected: list[str]) -> list[str]:
        problems = []
        role = "worker" if facts["head_ip"] else "node"
        for ip in check.missing:
            dead = [node for node in facts["nodes"] if node["ip"] == ip and node["state"] == "DEAD"]
            problem = f"the {role} at {ip} is not in the cluster: {CHECK_NODE}"
            if dead:
                problem += f" (Ray lists it DEAD: {dead[-1]['state_message'] or 'no reason given'})"
            problems.append(problem)
        if check.missing:
            strangers = [ip for ip in facts["alive_ips"] if ip not in expected]
            if strangers:
                problems.append(
                    f"nodes are ALIVE at addresses not expected: {', '.join(strangers)}; a node that registered with "
                    "another address than its fabric one has RAY_NODE_IP_ADDRESS (or --node-ip-address) set wrong"
                )
        elif check.missing_count:
            why = facts["state_api_error"] or "the node IPs are unknown"
            verb = "is" if check.missing_count == 1 else "are"
            problems.append(
                f"{check.missing_count} of the {len(expected)} expected nodes ({', '.join(expected)}) {verb} not in the cluster "
                f"({facts['node_count']} ALIVE); which cannot be told because {why}: check the workers' ray container logs, "
                "the fabric, and that RAY_NODE_IP_ADDRESS is each node's fabric address"
            )
        for lack in check.lacking:
            resource = lack["resource"]
            if lack["scope"] == "node":
                where = lack["ip"] or f"node {lack['node_id']}"
                problems.append(
                    f"the node at {where} has {_amount(resource, lack['available'])}, less than the {_amount(resource, lack['required'])} "
                    f"required: {resource_hint(resource)}"
                )
            else:
                problems.append(
                    f"the cluster has {_amount(resource, lack['available'])} in all, less than the {_amount(resource, lack['required'])} "
                    f"its {len(expected) or facts['node_count']} nodes need: {resource_hint(resource)}"
                )
        return problems

    def main(self) -> None:
        status_text, nodes_text, nodes_error = self.read()
        try:
            status = parse_ray_status(status_text)
        except RayStatusParseError as exc:
            self.module.fail_json(msg=f"cannot parse the `ray status` output: {exc}", cmd=self.cmd, problems=[str(exc)])
        nodes = None
        if nodes_text is not None:
            try:
                nodes = parse_ray_nodes(nodes_text)
            except RayStatusParseError as exc:
                found = diagnose(nodes_text)
                nodes_error = f"{found[1]} ({exc})" if found else str(exc)
        facts = cluster_facts(status, nodes, nodes_error)
        expected = list(self.params["expected_nodes"])
        check = check_nodes(facts, expected, self.params["required_resources"] or None)
        problems = self.problems(facts, check, expected)
        outcome = {
            "changed": False,
            "ray_cluster": facts,
            "missing_nodes": check.missing,
            "missing_node_count": check.missing_count,
            "lacking_resources": check.lacking,
            "problems": problems,
            "cmd": self.cmd,
        }
        if problems and self.params["fail_on_problems"]:
            message = problems[0] if len(problems) == 1 else " ".join(f"({n}) {problem}" for n, problem in enumerate(problems, 1))
            self.module.fail_json(msg=message, **outcome)
        if expected and not facts["node_ips_known"]:
            self.module.warn(
                f"{facts['node_count']} nodes are ALIVE, as many as expected, but their IPs cannot be checked against expected_nodes: "
                f"{facts['state_api_error'] or 'the node IPs are unknown'}"
            )
        self.module.exit_json(**outcome)


def main(clock: Callable[[], float] = time.monotonic) -> None:
    module = AnsibleModule(
        argument_spec={
            "container": {"type": "str"},
            "docker_path": {"type": "str", "default": "docker"},
            "address": {"type": "str"},
            "verbose": {"type": "bool", "default": True},
            "list_nodes": {"type": "bool", "default": True},
            "expected_nodes": {"type": "list", "elements": "str", "default": []},
            "required_resources": {"type": "dict", "default": {}},
            "fail_on_problems": {"type": "bool", "default": True},
            "output": {"type": "str"},
            "nodes_output": {"type": "str"},
            "command_timeout": {"type": "int", "default": 120},
        },
        mutually_exclusive=[("container", "output")],
        required_one_of=[("container", "output")],
        required_by={"nodes_output": "output"},
        supports_check_mode=True,
    )
    for name, amount in module.params["required_resources"].items():
        try:
            module.params["required_resources"][name] = number = float(amount)
        except (TypeError, ValueError, OverflowError):
            number = math.nan
        if not math.isfinite(number):
            module.fail_json(msg=f"required_resources.{name} must be a number, not {str(amount)[:40]!r}")
    if module.params["command_timeout"] <= 0:
        module.fail_json(msg=f"command_timeout must be a positive number of seconds, not {module.params['command_timeout']}")
    RayClusterInfo(module, clock).main()


if __name__ == "__main__":
    main()
