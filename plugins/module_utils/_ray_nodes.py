# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure parser for ``ray list nodes`` (the state API) in its JSON, YAML and table forms: each node's id,
IP, state (ALIVE, DEAD), head flag, resources and labels. The JSON form is what ray_cluster_info asks
for; the YAML and table forms are what a user may paste into its ``nodes_output``."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_text import (
    MEMORY_RESOURCES,
    NUMBER,
    PYTHON_BOOL,
    RayStatusParseError,
    finite,
    is_number,
    parse_quantity,
)


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
        elif is_number(value):
            amount = finite(value, f"resource {name}")
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
    if re.fullmatch(NUMBER, text):
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
                "is_head_node": PYTHON_BOOL.get(head) if head else None,
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
