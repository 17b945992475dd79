"""Every internal variable (``__name``) the roles and playbooks read is one they define.

A variable read but defined nowhere fails only when the task that reads it runs, in a lab scenario minutes in, or on a
user's cluster; a name read here and defined nowhere is a typo or the leftover of a variable removed. Defined means: a
key of a vars or defaults file, of a play's, block's or task's ``vars``, of a ``set_fact``, an ``add_host``'s
variables, a ``register`` or a ``loop_var``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
INTERNAL = re.compile(r"(?<![A-Za-z0-9_])__[a-z][a-z0-9_]*")
SETS_VARIABLES = ("ansible.builtin.set_fact", "ansible.builtin.add_host")


def yaml_files() -> list[Path]:
    return sorted(path for top in ("roles", "playbooks") for path in (REPO / top).rglob("*.yml") if "molecule" not in path.parts)


def texts(node: object) -> Iterator[str]:
    """Every string and key of a YAML document, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from texts(item)
    elif isinstance(node, str):
        yield node


def defined(node: object, in_vars_file: bool) -> Iterator[str]:
    """The names a document defines: every key of a vars or defaults file; elsewhere the keys of vars, set_fact and
    add_host, and the names register and loop_var give."""
    if in_vars_file and isinstance(node, dict):
        yield from map(str, node)
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("vars", *SETS_VARIABLES) and isinstance(value, dict):
                yield from map(str, value)
            elif key in ("register", "loop_var") and isinstance(value, str):
                yield value
            yield from defined(value, in_vars_file=False)
    elif isinstance(node, list):
        for item in node:
            yield from defined(item, in_vars_file=False)


def test_every_internal_variable_read_is_defined():
    names_defined: set[str] = set()
    read: dict[str, set[str]] = {}
    for path in yaml_files():
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        names_defined.update(defined(document, in_vars_file=path.parent.name in ("vars", "defaults")))
        for text in texts(document):
            for name in INTERNAL.findall(text):
                read.setdefault(name, set()).add(str(path.relative_to(REPO)))
    for path in sorted(path for top in ("roles", "playbooks") for path in (REPO / top).rglob("*.j2")):
        for name in INTERNAL.findall(path.read_text(encoding="utf-8")):
            read.setdefault(name, set()).add(str(path.relative_to(REPO)))
    undefined = {name: sorted(where) for name, where in read.items() if name not in names_defined}
    assert not undefined, f"read but defined nowhere in roles/ or playbooks/: {undefined}"
