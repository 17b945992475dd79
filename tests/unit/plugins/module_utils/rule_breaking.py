"""Break a parser's rules one at a time: the literals it tests lines with, and its regexes.

A rule is a literal the parser tests lines with (`"..." in text`, `.startswith(...)`), a key of a handler table
(a dict whose values are methods), or a module-level regex. The rule tests rebuild the parser from its source with
one rule replaced by a value no output holds (a regex by one that never matches) and ask that a real output's
person-read facts change.
"""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Iterator
from pathlib import Path

NEVER = "\x00no log holds this\x00"
# A pattern that matches nothing: a lookahead that refuses every position.
NEVER_PATTERN = r"(?!)"


class Rule:
    """One breakable literal of the parser's source: where it is and which logs it can touch."""

    def __init__(self, node: ast.Constant, kind: str) -> None:
        self.node = node
        self.kind = kind
        self.literal = str(node.value)

    @property
    def name(self) -> str:
        return f"{self.kind} {self.literal!r} (line {self.node.lineno})"

    def touches(self, log_text: str) -> bool:
        # A regex may be anchored to a message that prefixes hide in the raw log: it may touch any log.
        return self.kind == "regex" or self.literal in log_text

    def broken_value(self) -> str:
        return NEVER_PATTERN if self.kind == "regex" else NEVER


def _nodes_outside(tree: ast.Module, skipped: str | None) -> Iterator[ast.AST]:
    for top in tree.body:
        if isinstance(top, ast.FunctionDef) and top.name == skipped:
            continue
        yield from ast.walk(top)


def _string(node: ast.AST | None) -> ast.Constant | None:
    return node if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value else None


def rules_of(tree: ast.Module, skipped: str | None = None) -> list[Rule]:
    """The rules of a parser's source, outside the top-level function named skipped."""
    found = []
    for node in _nodes_outside(tree, skipped):
        if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            found.append((_string(node.left), "in"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("startswith", "endswith"):
                found.append((_string(node.args[0]), node.func.attr))
            elif node.func.attr == "compile":
                found.append((_string(node.args[0]), "regex"))
        elif isinstance(node, ast.Dict) and node.values and all(isinstance(value, ast.Attribute) for value in node.values):
            # The handler table: first word of a message -> the method that reads it.
            found.extend((_string(key), "handler") for key in node.keys)
    return [Rule(literal, kind) for literal, kind in found if literal is not None]


def module_without(rule: Rule, tree: ast.Module, source: Path, name: str) -> types.ModuleType:
    """The module built from the source's tree with this one rule broken (the tree is left as it was)."""
    kept = rule.node.value
    rule.node.value = rule.broken_value()
    try:
        module = types.ModuleType(name)
        sys.modules[name] = module  # dataclasses look their module up
        exec(compile(tree, str(source), "exec"), module.__dict__)
    finally:
        rule.node.value = kept
    return module
