# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure parsers for what Ray prints about its cluster, and the checks built on them.

No I/O here: callers pass the text that ``ray status`` (the autoscaler report, plain or ``-v``)
and ``ray list nodes`` (the state API, ``--format json``, ``yaml`` or ``table``) printed. The
report's layout changed across Ray versions (``Healthy:`` then ``Active:``/``Idle:``; ``Usage:``
then ``Total Usage:``; ``Demands:`` then ``Total Demands:`` then ``Pending Demands:`` beside
``From request_resources:``; per-node blocks named by IP, by node id or by instance id); every
one of them is read, by its section names, also when a paste lost the lines' leading spaces.

``ray status`` names nodes only by node type: ``node_<id>`` for clusters started by hand with
``ray start``. Node IPs, states (ALIVE, DEAD) and which node is the head come from the state API,
which needs the dashboard; without it ``missing_nodes`` can count the missing nodes but not name
them.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

MEMORY_RESOURCES = ("memory", "object_store_memory")

_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_QUANTITY = re.compile(rf"^(?P<number>{_NUMBER})\s*(?P<unit>B|KiB|MiB|GiB|TiB)?$")
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
_TABLE_BOOL = {"True": True, "False": False}


class RayStatusParseError(ValueError):
    """Raised when the text is not a Ray report or node list the parser can read."""


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


@dataclass(frozen=True)
class ListedNode:
    """A node as the state API lists it; resources in Ray's units, memory resources in bytes."""

    node_id: str
    ip: str | None
    state: str
    state_message: str | None
    is_head: bool | None
    node_name: str | None
    resources: dict
    labels: dict

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class NodeCheck:
    """What ``check_nodes`` found: the expected nodes not ALIVE (named when IPs are known,
    counted always) and the ALIVE nodes short of a required resource."""

    missing: list
    missing_count: int
    ips_known: bool
    lacking: list


def _to_bytes(number: float, unit: str | None) -> int:
    return round(number * _UNITS[unit or "B"])


def parse_quantity(text: str, resource: str = "", unit: str | None = None) -> float:
    """A figure as Ray prints it (``2.0``, ``0B``, ``16.07GiB``, ``16.071 GiB``, or a number with
    its ``unit`` apart): a figure with a unit, and any figure of a memory resource, in bytes."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise RayStatusParseError(f"not a resource quantity: {text!r}")
    number = float(match["number"])
    if not math.isfinite(number):  # "1e400" matches the pattern and reads as infinity
        raise RayStatusParseError(f"not a finite resource quantity: {text!r}")
    suffix = match["unit"] or unit
    if suffix is not None:
        return _to_bytes(number, suffix)
    if resource in MEMORY_RESOURCES:
        return round(number)
    return number


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finite(value: float, what: str) -> float:
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise RayStatusParseError(f"{what} is not a finite number: {str(value)[:40]}")
    return number


def _bundle(text: str) -> dict:
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise RayStatusParseError(f"not a resource bundle: {text!r}"[:300]) from exc
    if not isinstance(value, dict):
        raise RayStatusParseError(f"not a resource bundle: {text!r}"[:300])
    bundle = {}
    for key, amount in value.items():
        if not _is_number(amount):
            raise RayStatusParseError(f"resource bundle {text!r} gives {key!r} as {type(amount).__name__} {amount!r}, not a number"[:300])
        bundle[str(key)] = _finite(amount, f"resource {key!r} of bundle {text[:200]!r}")
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
        elif self.node_section == "is_idle" and line in _TABLE_BOOL:
            node.is_idle = _TABLE_BOOL[line]
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


# ---------------------------------------------------------------------------------------------
# ray list nodes


def _resources(raw: Any) -> tuple[dict, str | None, bool]:
    """The resources (without Ray's ``node:<ip>`` markers), the IP they name, whether the head's."""
    if raw is not None and not isinstance(raw, dict):
        raise RayStatusParseError(f"`ray list nodes` gives a node's resources_total as {type(raw).__name__} {raw!r}, not a mapping"[:300])
    resources: dict = {}
    ip = None
    head = False
    for key, value in (raw or {}).items():
        name = str(key)
        if name == "node:__internal_head__":
            head = True
        elif name.startswith("node:"):
            ip = name[5:]
        elif _is_number(value):
            amount = _finite(value, f"resource {name}")
            resources[name] = round(amount) if name in MEMORY_RESOURCES and amount.is_integer() else amount
        elif isinstance(value, str):
            resources[name] = parse_quantity(value, name)
        else:
            raise RayStatusParseError(f"`ray list nodes` gives resource {name} as {type(value).__name__} {value!r}, not a number"[:300])
    return dict(sorted(resources.items())), ip, head


def _text_field(entry: dict, key: str, *, required: bool = False) -> str | None:
    """A node's field that must be a string (or, unless required, null or absent)."""
    value = entry.get(key)
    if isinstance(value, str) and (value or not required):
        return value
    if value is None and not required:
        return None
    raise RayStatusParseError(f"`ray list nodes` gives a node's {key} as {type(value).__name__} {value!r}, not a string"[:300])


def _listed_node(entry: dict) -> ListedNode:
    if not isinstance(entry, dict) or "node_id" not in entry or "state" not in entry:
        raise RayStatusParseError(f"not a node of `ray list nodes`: {entry!r}"[:300])
    resources, marker_ip, marker_head = _resources(entry.get("resources_total"))
    is_head = entry.get("is_head_node")
    if is_head is not None and not isinstance(is_head, bool):
        raise RayStatusParseError(f"`ray list nodes` gives a node's is_head_node as {type(is_head).__name__} {is_head!r}, not true or false"[:300])
    labels = entry.get("labels")
    if labels is not None and not isinstance(labels, dict):
        raise RayStatusParseError(f"`ray list nodes` gives a node's labels as {type(labels).__name__} {labels!r}, not a mapping"[:300])
    return ListedNode(
        node_id=str(_text_field(entry, "node_id", required=True)),
        ip=_text_field(entry, "node_ip") or marker_ip,
        state=str(_text_field(entry, "state", required=True)),
        state_message=_text_field(entry, "state_message") or None,
        is_head=is_head if is_head is not None else (True if marker_head else None),
        node_name=_text_field(entry, "node_name"),
        resources=resources,
        labels={str(key): str(value) for key, value in (labels or {}).items()},
    )


def _yaml_scalar(text: str) -> Any:
    text = text.strip()
    if text in ("null", "~", ""):
        return None
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except ValueError as exc:
            raise RayStatusParseError(f"not a quoted YAML string: {text[:200]!r} ({exc})") from exc
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(_NUMBER, text):
        return float(text)
    return text


def _closed(text: str) -> bool:
    """Whether a quoted YAML scalar that starts ``text`` ends there too."""
    quote, body = text[0], text[1:]
    if quote == "'":
        return body.replace("''", "").endswith("'")
    return body.endswith('"') and not body.endswith('\\"')


def _parse_nodes_yaml(lines: list[str]) -> list[dict]:
    """The YAML ``ray list nodes --format yaml`` prints: a list of flat mappings whose
    ``resources_total`` and ``labels`` are mappings one level down, and whose long quoted
    strings fold onto deeper-indented lines."""
    items: list[dict] = []
    item: dict | None = None
    nested: dict | None = None
    folding: tuple[dict, str, str] | None = None  # a quoted scalar still open: where, key, text so far
    field_indent = 0
    for raw in lines:
        if not raw.strip() or raw.strip() in ("---", "..."):
            continue
        if folding is not None:
            where, key, text = folding
            text = f"{text} {raw.strip()}"
            folding = None
            if _closed(text):
                where[key] = _yaml_scalar(text)
            else:
                folding = (where, key, text)
            continue
        start = re.match(r"^-(?P<pad>\s+)(?P<rest>.*)$", raw)
        if start:
            item = {}
            items.append(item)
            nested = None
            field_indent = 1 + len(start["pad"])
            indent, body = field_indent, start["rest"]
        else:
            indent, body = len(raw) - len(raw.lstrip()), raw.strip()
        match = re.match(r"^(?P<key>\S+):(?: (?P<value>.*))?$", body)
        if item is None or match is None:
            raise RayStatusParseError(f"not a `ray list nodes` YAML line: {raw!r}")
        key, value = match["key"], match["value"]
        if indent <= field_indent:
            target: dict = item
            nested = None
        elif nested is not None:
            target = nested
        else:
            raise RayStatusParseError(f"unexpected indentation in `ray list nodes` YAML: {raw!r}")
        if not value:
            if target is item:
                nested = item[key] = {}
            else:
                target[key] = None
        elif value[0] in "'\"" and not (len(value) > 1 and _closed(value)):
            folding = (target, key, value)
        else:
            target[key] = _yaml_scalar(value)
    if folding is not None:
        raise RayStatusParseError("`ray list nodes` YAML ends inside a quoted string")
    return items


def _joined(cells: dict[str, list[str]], name: str) -> str | None:
    return " ".join(cells.get(name, [])) or None


def _parse_nodes_table(lines: list[str]) -> list[dict]:
    """The table ``ray list nodes`` prints by default (tabulate, one row per node, the
    resources and labels of a node continued on the lines below its row). Columns are cut
    where the header's names start; older Rays have no STATE_MESSAGE column."""
    header_index = next(index for index, line in enumerate(lines) if "NODE_ID" in line and "NODE_IP" in line)
    columns = [(match.start(), match.group()) for match in re.finditer(r"\S+", lines[header_index])]
    bounds = [(start, columns[position + 1][0] if position + 1 < len(columns) else None, name) for position, (start, name) in enumerate(columns)]
    rows: list[dict[str, list[str]]] = []
    for raw in lines[header_index + 1 :]:
        if not raw.strip():
            continue
        if raw[: columns[0][0]].strip().isdigit():
            rows.append({name: [] for _start, name in columns})
        elif not rows:
            continue
        for start, end, name in bounds:
            cell = raw[start:end].strip()
            if cell:
                rows[-1][name].append(cell)
    nodes = []
    for row in rows:
        resources = {}
        for entry in row.get("RESOURCES_TOTAL", []):
            name, _colon, value = entry.rpartition(": ")
            resources[name] = _yaml_scalar(value)
        labels = dict(entry.partition(": ")[::2] for entry in row.get("LABELS", []))
        head = _joined(row, "IS_HEAD_NODE")
        nodes.append(
            {
                "node_id": _joined(row, "NODE_ID"),
                "node_ip": _joined(row, "NODE_IP"),
                "is_head_node": _TABLE_BOOL.get(head) if head else None,
                "state": _joined(row, "STATE"),
                "state_message": _joined(row, "STATE_MESSAGE"),
                "node_name": _joined(row, "NODE_NAME"),
                "resources_total": resources,
                "labels": labels,
            }
        )
    return nodes


def parse_ray_nodes(text: str) -> list[ListedNode]:
    """Read what ``ray list nodes`` printed, as JSON (``--format json``), YAML or the table."""
    lines = text.splitlines()
    stripped = [line.strip() for line in lines]
    for index, line in enumerate(stripped):
        if line.startswith("["):
            try:
                entries = json.loads("\n".join(lines[index:]))
            except ValueError as exc:
                raise RayStatusParseError(f"`ray list nodes` printed JSON that does not parse: {exc}") from exc
            if not isinstance(entries, list):
                raise RayStatusParseError("`ray list nodes` printed JSON that is not a list of nodes")
            return [_listed_node(entry) for entry in entries]
        if line == "---" or line.startswith("-   node_id:") or line.startswith("- node_id:"):
            return [_listed_node(entry) for entry in _parse_nodes_yaml(lines[index:])]
        if "NODE_ID" in line and "NODE_IP" in line:
            return [_listed_node(entry) for entry in _parse_nodes_table(lines)]
    error = next((line for line in stripped if line.startswith("Error:")), None)
    first = next((line for line in stripped if line), "")
    raise RayStatusParseError(f"`ray list nodes` printed no node list: {(error or first)[:400]}")


# ---------------------------------------------------------------------------------------------
# The cluster's facts and the checks on them


def _usage_dict(usage: dict) -> dict:
    return {name: asdict(value) for name, value in sorted(usage.items())}


def cluster_facts(status: StatusReport | None = None, nodes: list[ListedNode] | None = None, nodes_error: str | None = None) -> dict:
    """One view of the cluster from the report and (when the state API answered) the node list.

    Nodes are keyed by node id: the state API gives IP, state and head; the verbose report each
    node's usage; ``node_<id>`` node types of clusters started by hand add nodes that neither of
    them listed (as ALIVE, IP unknown).
    """
    entries: list[dict] = []
    by_id: dict[str, dict] = {}

    def add(node_id: str | None, **values: Any) -> dict:
        entry: dict[str, Any] = {
            "node_id": node_id,
            "ip": None,
            "state": "ALIVE",
            "state_message": None,
            "is_head": None,
            "node_type": None,
            "resources": {},
            "usage": {},
            "idle_ms": None,
            "activity": [],
        }
        entry.update(values)
        entries.append(entry)
        if node_id:
            by_id[node_id] = entry
        return entry

    for node in nodes or []:
        add(
            node.node_id,
            ip=node.ip,
            state=node.state,
            state_message=node.state_message,
            is_head=node.is_head,
            resources=dict(node.resources),
        )
    group_count = 0
    if status is not None and status.available:
        for report in status.node_reports:
            entry = by_id.get(report.node_id or "")
            if entry is None and report.ip:
                entry = next((candidate for candidate in entries if candidate["ip"] == report.ip and candidate["state"] == "ALIVE"), None)
            if entry is None:
                entry = add(report.node_id, ip=report.ip)
            entry["node_type"] = report.node_type
            entry["usage"] = _usage_dict(report.usage)
            entry["idle_ms"] = report.idle_ms
            entry["activity"] = list(report.activity)
            if not entry["resources"]:
                entry["resources"] = {name: usage.total for name, usage in sorted(report.usage.items())}
        for group in [*status.active, *status.idle]:
            group_count += group.count
            if group.node_id is None:
                continue
            entry = by_id.get(group.node_id)
            if entry is None:
                entry = add(group.node_id)
            if entry["node_type"] is None:
                entry["node_type"] = group.node_type
    alive = [entry for entry in entries if entry["state"] == "ALIVE"]
    alive_count = len(alive) if nodes is not None else max(len(alive), group_count)
    alive_ips = sorted({entry["ip"] for entry in alive if entry["ip"]})
    if status is not None and status.usage:
        usage = _usage_dict(status.usage)
    else:
        totals: dict[str, float] = {}
        for entry in alive:
            for name, amount in entry["resources"].items():
                totals[name] = totals.get(name, 0) + amount
        usage = {
            name: {"used": None, "total": amount, "placement_group_used": None, "placement_group_reserved": None} for name, amount in sorted(totals.items())
        }
    return {
        "available": status.available if status is not None else nodes is not None,
        "message": status.message if status is not None else None,
        "timestamp": status.timestamp if status is not None else None,
        "node_count": alive_count,
        "alive_ips": alive_ips,
        "node_ips_known": alive_count == sum(1 for entry in alive if entry["ip"]),
        "head_ip": next((entry["ip"] for entry in alive if entry["is_head"]), None),
        "dead_nodes": sum(1 for entry in entries if entry["state"] == "DEAD"),
        "nodes": entries,
        "node_groups": {
            "active": [asdict(group) for group in status.active] if status is not None else [],
            "idle": [asdict(group) for group in status.idle] if status is not None else [],
        },
        "totals": {name: value["total"] for name, value in usage.items()},
        "usage": usage,
        "pending_nodes": [asdict(node) for node in status.pending_nodes] if status is not None else [],
        "pending_launches": [asdict(launch) for launch in status.pending_launches] if status is not None else [],
        "failures": [asdict(failure) for failure in status.failures] if status is not None else [],
        "demands": [asdict(demand) for demand in status.demands] if status is not None else [],
        "placement_group_demands": [asdict(demand) for demand in status.placement_group_demands] if status is not None else [],
        "resource_requests": [asdict(request) for request in status.resource_requests] if status is not None else [],
        "state_api": nodes is not None,
        "state_api_error": nodes_error,
    }


def missing_nodes(expected_ips: list[str], facts: dict) -> list[str]:
    """The expected IPs no ALIVE node has, in their given order.

    Empty when the ALIVE nodes' IPs are not all known (no state API): ``check_nodes`` then
    counts the missing nodes instead.
    """
    if not facts["node_ips_known"]:
        return []
    alive = set(facts["alive_ips"])
    return [ip for ip in expected_ips if ip not in alive]


def lacking_resources(facts: dict, required: dict, expected_ips: list[str] | None = None) -> list[dict]:
    """ALIVE nodes (those at ``expected_ips`` when given and known) with less than ``required``
    of a resource (``{"GPU": 1}``; memory resources in bytes). Where no node's own resources are
    known, the cluster's totals are checked against ``required`` times the number of nodes."""
    alive = [node for node in facts["nodes"] if node["state"] == "ALIVE"]
    if expected_ips and facts["node_ips_known"]:
        alive = [node for node in alive if node["ip"] in expected_ips]
    known = [node for node in alive if node["resources"]]
    lacking: list[dict] = []
    if known:
        for node in known:
            for name, amount in required.items():
                have = node["resources"].get(name, 0.0)
                if have < float(amount):
                    lacking.append(
                        {"scope": "node", "node_id": node["node_id"], "ip": node["ip"], "resource": name, "required": float(amount), "available": have}
                    )
        return lacking
    nodes = len(expected_ips) if expected_ips else facts["node_count"]
    for name, amount in required.items():
        have = facts["totals"].get(name, 0.0)
        if have < float(amount) * nodes:
            lacking.append({"scope": "cluster", "node_id": None, "ip": None, "resource": name, "required": float(amount) * nodes, "available": have})
    return lacking


def check_nodes(facts: dict, expected_ips: list[str] | None = None, required: dict | None = None) -> NodeCheck:
    """The expected nodes not ALIVE, and the ALIVE nodes short of ``required``."""
    expected = list(expected_ips or [])
    missing = missing_nodes(expected, facts)
    count = len(missing) if facts["node_ips_known"] else max(0, len(expected) - facts["node_count"])
    lacking = lacking_resources(facts, required, expected) if required else []
    return NodeCheck(missing=missing, missing_count=count, ips_known=facts["node_ips_known"], lacking=lacking)


# ---------------------------------------------------------------------------------------------
# Why a `docker exec ... ray ...` command failed

_DIAGNOSES = (
    ("no_container", re.compile(r"No such container"), "the container does not exist on this host"),
    ("container_stopped", re.compile(r"is not running|is restarting|is paused"), "the container is not running"),
    (
        "ray_missing",
        re.compile(r'exec: "?ray"?: executable file not found|ray: (?:command )?not found|No module named .?ray'),
        "the image has no `ray` (vLLM no longer bundles Ray since about 0.18; NGC vLLM 26.05 lacks it): install ray[default] in the image",
    ),
    (
        "docker_daemon",
        re.compile(r"Cannot connect to the Docker daemon|permission denied while trying to connect to the Docker daemon"),
        "the Docker daemon did not answer (not running, or no permission on its socket)",
    ),
    (
        "gcs_unreachable",
        re.compile(r"Could not find any running Ray instance|Failed to connect to GCS|Timed out while waiting for GCS|Failed to get cluster ID from GCS"),
        "no Ray head answers at that address: the head's `ray start --head` is not running or listens elsewhere",
    ),
    (
        "state_api_unavailable",
        re.compile(r"Failed to connect to API server|Failed to make request to http"),
        "the state API (`ray list nodes`) is unavailable: the dashboard is off (ray start --include-dashboard=true --dashboard-host 127.0.0.1 enables it)",
    ),
)


def diagnose(text: str) -> tuple[str, str] | None:
    """What a failing ``docker exec CONTAINER ray ...`` printed means: (kind, plain hint), or None."""
    for kind, pattern, hint in _DIAGNOSES:
        if pattern.search(text):
            return kind, hint
    return None
