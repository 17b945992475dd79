# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure parser for the report ``ray status`` (plain or ``-v``) prints: the autoscaler's view of the cluster.

No I/O here: callers pass the text. The report's layout changed across Ray versions (``Healthy:``
then ``Active:``/``Idle:``; ``Usage:`` then ``Total Usage:``; ``Demands:`` then ``Total Demands:``
then ``Pending Demands:`` beside ``From request_resources:``; per-node blocks named by IP, by node
id or by instance id); every one of them is read, by its section names, also when a paste lost the
lines' leading spaces. ``ray status`` names nodes only by node type: ``node_<id>`` for clusters
started by hand with ``ray start``; their IPs and states come from ``ray list nodes`` (_ray_nodes.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass, field

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_text import (
    PYTHON_BOOL,
    RayStatusParseError,
    finite,
    is_number,
    parse_quantity,
)

_HEADER = re.compile(r"^=+ Autoscaler status: (?P<timestamp>.*?) =+$")
_NO_STATUS = "No cluster status."
_SEPARATOR = re.compile(r"^-{3,}$")
_TIMING = re.compile(r"^(?:GCS request time|Node Provider non_terminated_nodes time|Autoscaler iteration time): ")
_NODE_ID = re.compile(r"^[0-9a-f]{56}$")
_READONLY_NODE_TYPE = re.compile(r"^node_(?P<id>[0-9a-f]{56})$")
_IP = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]+)$")
_GROUP = re.compile(r"^(?P<count>\d+) (?P<node_type>\S.*)$")
_PENDING_LAUNCH = re.compile(r"^(?P<node_type>.+), (?P<count>\d+) launching$")
_PENDING_NODE = re.compile(r"^(?P<address>\S+): (?P<node_type>[^,]+), (?P<status>.+)$")
_FAILURE = re.compile(r"^(?P<node_type>.+?): (?P<category>[A-Za-z]+) \((?P<key>ip|instance_id|latest_attempt): (?P<value>[^)]*)\)(?: - (?P<details>.*))?$")
_USAGE = re.compile(
    r"^(?P<used>\S+)/(?P<total>\S+)(?:\s+(?P<unit>B|KiB|MiB|GiB|TiB)(?=\s))?\s+(?P<name>\S+)"
    r"(?:\s+\((?P<pg_used>.+?) used of (?P<pg_reserved>.+?) reserved in placement groups\))?$"
)
_TASK_DEMAND = re.compile(r"^(?P<bundle>\{.*\}): (?P<count>\d+)\+ pending tasks/actors(?: \((?P<pg>\d+)\+ using placement groups\))?$")
_PG_DEMAND = re.compile(r"^(?P<shapes>\{.*\} \* \d+) \((?P<strategy>[A-Z_]+)\): (?P<count>\d+)\+ pending placement groups$")
_PG_SHAPE = re.compile(r"(?P<bundle>\{[^{}]*\}) \* (?P<count>\d+)")
_REQUEST = re.compile(r"^(?P<bundle>\{.*\}): (?P<count>\d+)\+? from request_resources\(\)$")
_NODE_LINE = re.compile(r"^Node: ?(?P<name>.*?)(?:\s*\((?P<node_type>[^()]*)\))?$")
_NODE_IDLE = re.compile(r"^Idle: (?P<ms>\d+) ms$")
_NONE_LINES = {
    "(no active nodes)",
    "(no idle nodes)",
    "(no pending nodes)",
    "(no failures)",
    "(no resource demands)",
    "(none)",
    "(no request_resources() constraints)",
    "(no activity)",
}
# Section names of the report, old and new, mapped to what they hold.
_SECTIONS = {
    "Healthy:": "active",
    "Active:": "active",
    "Idle:": "idle",
    "Pending:": "pending",
    "Recent failures:": "failures",
    "Usage:": "usage",
    "Total Usage:": "usage",
    "Demands:": "demands",
    "Total Demands:": "demands",
    "Pending Demands:": "demands",
    "From request_resources:": "requests",
    "Total Constraints:": "requests",
}
_PLAIN_HEADINGS = {"Node status", "Resources"}


@dataclass(frozen=True)
class Usage:
    """One resource's use: memory resources in bytes, others in Ray's (fractional) units."""

    used: float
    total: float
    placement_group_used: float | None = None
    placement_group_reserved: float | None = None


@dataclass(frozen=True)
class NodeGroup:
    """A line of Active/Healthy/Idle: how many nodes of a node type."""

    count: int
    node_type: str
    node_id: str | None = None


@dataclass(frozen=True)
class PendingNode:
    address: str
    node_type: str
    status: str


@dataclass(frozen=True)
class PendingLaunch:
    node_type: str
    count: int


@dataclass(frozen=True)
class Failure:
    """A line of Recent failures: a terminated node or a failed launch."""

    node_type: str
    category: str
    ip: str | None = None
    instance_id: str | None = None
    latest_attempt: str | None = None
    details: str | None = None


@dataclass(frozen=True)
class Demand:
    """Tasks or actors waiting for a resource shape nobody has free."""

    bundle: dict
    count: int
    placement_group_count: int | None = None


@dataclass(frozen=True)
class PlacementGroupDemand:
    """Placement groups waiting to be placed: their bundles (shape and count) and strategy."""

    bundles: list
    strategy: str
    count: int


@dataclass(frozen=True)
class ResourceRequest:
    bundle: dict
    count: int


@dataclass
class NodeReport:
    """A per-node block of ``ray status -v``."""

    name: str
    node_type: str | None = None
    node_id: str | None = None
    ip: str | None = None
    instance_id: str | None = None
    idle_ms: int | None = None
    is_idle: bool | None = None
    usage: dict = field(default_factory=dict)
    activity: list = field(default_factory=list)


@dataclass
class StatusReport:
    available: bool = True
    message: str | None = None
    timestamp: str | None = None
    sections: list = field(default_factory=list)
    active: list = field(default_factory=list)
    idle: list = field(default_factory=list)
    pending_launches: list = field(default_factory=list)
    pending_nodes: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    demands: list = field(default_factory=list)
    placement_group_demands: list = field(default_factory=list)
    resource_requests: list = field(default_factory=list)
    node_reports: list = field(default_factory=list)
    unparsed: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _bundle(text: str) -> dict:
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise RayStatusParseError(f"not a resource bundle: {text!r}"[:300]) from exc
    if not isinstance(value, dict):
        raise RayStatusParseError(f"not a resource bundle: {text!r}"[:300])
    bundle = {}
    for key, amount in value.items():
        if not is_number(amount):
            raise RayStatusParseError(f"resource bundle {text!r} gives {key!r} as {type(amount).__name__} {amount!r}, not a number"[:300])
        bundle[str(key)] = finite(amount, f"resource {key!r} of bundle {text[:200]!r}")
    return bundle


def _usage(line: str) -> tuple[str, Usage] | None:
    match = _USAGE.match(line)
    if match is None:
        return None
    name = match["name"]
    unit = match["unit"]
    try:
        used = parse_quantity(match["used"], name, unit)
        total = parse_quantity(match["total"], name, unit)
        pg_used = parse_quantity(match["pg_used"], name) if match["pg_used"] is not None else None
        pg_reserved = parse_quantity(match["pg_reserved"], name) if match["pg_reserved"] is not None else None
    except RayStatusParseError:
        return None
    return name, Usage(used, total, pg_used, pg_reserved)


def _group(line: str) -> NodeGroup | None:
    match = _GROUP.match(line)
    if match is None:
        return None
    readonly = _READONLY_NODE_TYPE.match(match["node_type"])
    return NodeGroup(int(match["count"]), match["node_type"], readonly["id"] if readonly else None)


def _node_report(line: str) -> NodeReport:
    match = _NODE_LINE.match(line)
    if match is None:  # pragma: no cover - the pattern matches every "Node: ..." line
        raise RayStatusParseError(f"not a node line: {line!r}")
    name = match["name"].strip()
    node_type = match["node_type"]
    report = NodeReport(name=name, node_type=node_type)
    readonly = _READONLY_NODE_TYPE.match(node_type or "")
    if _NODE_ID.match(name):
        report.node_id = name
    elif _IP.match(name):
        report.ip = name
    elif name:
        report.instance_id = name
    if report.node_id is None and readonly:
        report.node_id = readonly["id"]
    return report


class _StatusReader:
    def __init__(self) -> None:
        self.report = StatusReport()
        self.section: str | None = None
        self.node: NodeReport | None = None
        self.node_section: str | None = None

    def top_line(self, line: str) -> None:
        section = _SECTIONS.get(line)
        if section is not None:
            self.section = section
            self.report.sections.append(line[:-1])
            return
        if line in _PLAIN_HEADINGS:
            self.section = None
            self.report.sections.append(line)
            return
        if line in _NONE_LINES:
            return
        handler = getattr(self, f"_{self.section}", None)
        if handler is None or not handler(line):
            self.report.unparsed.append(line)

    def _active(self, line: str) -> bool:
        group = _group(line)
        if group is not None:
            self.report.active.append(group)
        return group is not None

    def _idle(self, line: str) -> bool:
        group = _group(line)
        if group is not None:
            self.report.idle.append(group)
        return group is not None

    def _pending(self, line: str) -> bool:
        launch = _PENDING_LAUNCH.match(line)
        if launch:
            self.report.pending_launches.append(PendingLaunch(launch["node_type"], int(launch["count"])))
            return True
        node = _PENDING_NODE.match(line)
        if node:
            self.report.pending_nodes.append(PendingNode(node["address"], node["node_type"], node["status"]))
            return True
        return False

    def _failures(self, line: str) -> bool:
        match = _FAILURE.match(line)
        if match is None:
            return False
        key, value = match["key"], match["value"]
        self.report.failures.append(
            Failure(
                node_type=match["node_type"],
                category=match["category"],
                ip=value if key == "ip" else None,
                instance_id=value if key == "instance_id" else None,
                latest_attempt=value if key == "latest_attempt" else None,
                details=match["details"],
            )
        )
        return True

    def _usage(self, line: str) -> bool:
        parsed = _usage(line)
        if parsed is not None:
            self.report.usage[parsed[0]] = parsed[1]
        return parsed is not None

    def _demands(self, line: str) -> bool:
        task = _TASK_DEMAND.match(line)
        if task:
            self.report.demands.append(Demand(_bundle(task["bundle"]), int(task["count"]), int(task["pg"]) if task["pg"] else None))
            return True
        group = _PG_DEMAND.match(line)
        if group:
            bundles = [{"bundle": _bundle(shape["bundle"]), "count": int(shape["count"])} for shape in _PG_SHAPE.finditer(group["shapes"])]
            self.report.placement_group_demands.append(PlacementGroupDemand(bundles, group["strategy"], int(group["count"])))
            return True
        # Before "From request_resources:" had its own section, its lines sat among the demands.
        return self._requests(line)

    def _requests(self, line: str) -> bool:
        match = _REQUEST.match(line)
        if match:
            self.report.resource_requests.append(ResourceRequest(_bundle(match["bundle"]), int(match["count"])))
        return match is not None

    def node_line(self, line: str) -> None:
        node = self.node
        if node is None:  # pragma: no cover - only called inside a node block
            return
        if line == "Usage:":
            self.node_section = "usage"
        elif line == "Activity:":
            self.node_section = "activity"
        elif line == "Is Idle:":
            self.node_section = "is_idle"
        elif line.startswith("Id: "):
            node.node_id = line[4:].strip()
        elif _NODE_IDLE.match(line):
            node.idle_ms = int(line.split()[1])
        elif self.node_section == "usage" and self._node_usage(node, line):
            pass
        elif self.node_section == "activity" and line not in _NONE_LINES:
            node.activity.append(line)
        elif self.node_section == "is_idle" and line in PYTHON_BOOL:
            node.is_idle = PYTHON_BOOL[line]
        elif line not in _NONE_LINES:
            self.report.unparsed.append(line)

    @staticmethod
    def _node_usage(node: NodeReport, line: str) -> bool:
        parsed = _usage(line)
        if parsed is not None:
            node.usage[parsed[0]] = parsed[1]
        return parsed is not None

    def read(self, lines: list[str]) -> StatusReport:
        for raw in lines:
            line = raw.strip()
            if not line or _SEPARATOR.match(line) or _TIMING.match(line):
                continue
            if line.startswith("Node: ") or line == "Node:":
                self.node = _node_report(line)
                self.node_section = None
                self.report.node_reports.append(self.node)
            elif self.node is not None:
                self.node_line(line)
            else:
                self.top_line(line)
        return self.report


def parse_ray_status(text: str) -> StatusReport:
    """Read what ``ray status`` (or ``ray status -v``) printed.

    Lines before the ``======== Autoscaler status`` header (log lines of the CLI) are skipped.
    ``No cluster status.`` (the autoscaler has not reported yet) gives ``available=False``.
    """
    lines = text.splitlines()
    for index, raw in enumerate(lines):
        line = raw.strip()
        header = _HEADER.match(line)
        if header:
            report = _StatusReader().read(lines[index + 1 :])
            report.timestamp = header["timestamp"]
            return report
        if line.startswith(_NO_STATUS):
            return StatusReport(available=False, message=" ".join(part.strip() for part in lines[index:] if part.strip()))
    first = next((line.strip() for line in lines if line.strip()), "")
    raise RayStatusParseError(f"no `ray status` report in the output (no '======== Autoscaler status' line); it starts with {first[:200]!r}")
