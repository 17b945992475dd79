"""docs/troubleshooting.md's signatures say what the collection prints.

After a line starting with `**Signature**`, the fenced block that follows that paragraph lists what a user sees: the
collection's messages, with `<...>` for what changes from run to run and `...` for cut text, and the vLLM, Ray or NCCL
lines that trigger them. Every literal fragment of those lines (what is left between the `<...>` and `...`) must come
from the sources: the literal pieces of the collection's messages (Python string constants under plugins/, the strings
of the YAML, the templates and the files of the roles and playbooks, each split where a value is filled in), or the
real logs the guide copies its log lines from (the parser's fixtures). A fragment is covered when it lies within one
piece, or when it is pieces joined the way a message composes them: the end of one piece, whole pieces, the start of
another (`<host>: <what>: <evidence>. Fix: <fix>.` from a rule table's texts). A whole piece in the middle must be text,
not a value the code fills in: a lone word or number there (`port 1`, `sparkinfer-ray`) is written `<...>`.
"""

from __future__ import annotations

import ast
import bisect
import gzip
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "troubleshooting.md"
LOG_FIXTURES = REPO / "tests" / "unit" / "plugins" / "module_utils" / "fixtures"

# Where a message fills in a value: a Jinja expression, statement or comment; a str.format field, a shell's ${VAR} or
# a %-style conversion.
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
HOLE = re.compile(JINJA.pattern + r"|\$?\{[^{}]*\}|%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifgx]", re.DOTALL)
# A string literal inside a Jinja expression ('port ' ~ n ~ ' is up'); one that Jinja joins a list with or picks by a
# condition, which prints as it is.
QUOTED = r"'[^'\\\n]*'|\"[^\"\\\n]*\""
JINJA_STRING = re.compile(QUOTED)
JINJA_AS_IS = re.compile(rf"join\(\s*(?P<joined>{QUOTED})\s*\)|(?P<then>{QUOTED})\s+if\b|\belse\s+(?P<otherwise>{QUOTED})")
# Module documentation blocks: ansible-doc prints them, no failure does.
MODULE_DOCS = {"DOCUMENTATION", "EXAMPLES", "RETURN"}
# A piece that may stand whole between two others in a composed message, by its shape: text of several words, a
# separator, or a snake_case name (a variable, an environment variable, a fact or a failure class). Text the code prints
# as it is may too, whatever its shape (see literal_pieces). Any other lone word or number there is a value the code
# fills in (a default such as "port 1", a figure), which the guide writes as <...>: taking it would also let drift pass
# as words strung together.
JOINT = re.compile(r".* .*|[^A-Za-z0-9]+|[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+", re.DOTALL)
# vLLM's source tag, after which its failure messages quote a line ("... [core.py:1100] ValueError: ...").
VLLM_SOURCE_TAG = re.compile(r"\[[\w./-]+\.py:\d+\] ")

# In a signature line: a placeholder, or cut text.
PLACEHOLDER_OR_CUT = re.compile(r"<[^<>]*>|\.\.\.")
# What a fragment's ends lose before it is looked up: spaces and the punctuation around a filled-in value.
FRAGMENT_EDGES = " .,;:()[]{}'\"`|=-"
SHORTEST_FRAGMENT = 4


def fold(text: str) -> str:
    """Whitespace as one space, none at the ends: YAML folding and line wrapping do not matter."""
    return " ".join(text.split())


# -- the sources ------------------------------------------------------------------------------------------------------


def literal_pieces(text: str, whole: bool = False) -> Iterator[tuple[str, bool]]:
    """The literal pieces of a message text, split where a value is filled in, plus the string literals of its Jinja
    expressions; each with whether the code prints it as it is between two values: the text is `whole` (a named
    constant, ...), or it is a literal Jinja joins a list with or picks by a condition ('its' if ... else 'their')."""
    for expression in JINJA.findall(text):
        as_is = {match.start(group) for match in JINJA_AS_IS.finditer(expression) for group in ("joined", "then", "otherwise") if match.group(group)}
        for quoted in JINJA_STRING.finditer(expression):
            yield from literal_pieces(quoted.group()[1:-1], quoted.start() in as_is)
    for segment in HOLE.split(text):
        piece = fold(segment)
        if piece:
            yield piece, whole


def python_strings(path: Path) -> Iterator[tuple[str, bool]]:
    """Every string constant of a module (f-strings' literal parts included) but its docstrings and module docs, each
    with whether the code prints it as it is: a named constant (`NAME = "..."` at module level), what a list is joined
    with (`" and ".join(...)`), a branch of a conditional expression (`"worker" if ... else "node"`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped: set[int] = set()
    whole = {id(node.value) for node in tree.body if isinstance(node, ast.Assign) and all(isinstance(target, ast.Name) for target in node.targets)}
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id in MODULE_DOCS for target in node.targets):
            skipped.add(id(node.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            whole.add(id(node.func.value))
        if isinstance(node, ast.IfExp):
            whole.update((id(node.body), id(node.orelse)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            yield node.value, id(node) in whole


def yaml_strings(node: object) -> Iterator[str]:
    """Every string value of a YAML document, at any depth."""
    if isinstance(node, dict):
        for value in node.values():
            yield from yaml_strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from yaml_strings(item)
    elif isinstance(node, str):
        yield node


def collection_texts() -> Iterator[tuple[str, bool]]:
    """The texts the collection's messages are made of, each with whether the code prints it as it is (a role's vars/
    are named constants: they print the same on every run, where a default the inventory can change need not)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(REPO.glob("plugins/**/*.py")):
        yield from python_strings(path)
    for top in ("roles", "playbooks"):
        for path in sorted((REPO / top).rglob("*")):
            if "molecule" in path.parts or not path.is_file():
                continue
            if path.suffix in (".yml", ".yaml"):
                constant = top == "roles" and path.parent.name == "vars"
                for document in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader):
                    yield from ((text, constant) for text in yaml_strings(document))
            elif path.suffix == ".j2" or path.parent.name == "files":
                yield path.read_text(encoding="utf-8"), False


def log_lines() -> Iterator[str]:
    """The lines of the real vLLM, Ray and NCCL output the guide copies its log lines from, and of vLLM's lines also
    the message after the source tag, as the collection's failure messages quote it."""
    for path in sorted(LOG_FIXTURES.rglob("*")):
        if path.name.endswith(".log.gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as stream:
                lines = stream.read().splitlines()
        elif path.suffix in (".log", ".txt"):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        else:
            continue
        for line in lines:
            yield line
            tag = VLLM_SOURCE_TAG.search(line)
            if tag:
                yield line[tag.end() :]


class Sources:
    """Pieces of text a fragment must be made of, with the lookups the matcher needs."""

    def __init__(self, pieces: Iterable[str], joints: Iterable[str] = ()) -> None:
        self.pieces = frozenset(pieces)
        # The pieces that may stand whole between two parts: by their shape, or by where the code puts them.
        self.joints = frozenset(piece for piece in self.pieces if JOINT.fullmatch(piece)) | frozenset(joints)
        self.text = "\n".join(self.pieces)  # no piece holds a line break: a fragment found here lies within one piece
        self.sorted = sorted(self.pieces)
        self.sorted_reversed = sorted(piece[::-1] for piece in self.pieces)

    @staticmethod
    def _starts_one(ordered: list[str], text: str) -> bool:
        index = bisect.bisect_left(ordered, text)
        return index < len(ordered) and ordered[index].startswith(text)

    def starts_a_piece(self, text: str) -> bool:
        return self._starts_one(self.sorted, text)

    def ends_a_piece(self, text: str) -> bool:
        return self._starts_one(self.sorted_reversed, text[::-1])

    def covers(self, fragment: str) -> bool:
        """Whether the fragment lies within one piece, or is the end of a piece, whole pieces and the start of one
        (a space between two parts optional: the pieces are folded and stripped)."""
        if fragment in self.text:
            return True
        starts = {end for end in range(1, len(fragment)) if self.ends_a_piece(fragment[:end])}
        seen: set[int] = set()
        while starts:
            start = starts.pop()
            seen.add(start)
            if fragment[start] == " ":
                start += 1
            if self.starts_a_piece(fragment[start:]):
                return True
            end = start + 1
            while end < len(fragment) and self.starts_a_piece(fragment[start:end]):
                if fragment[start:end] in self.joints and end not in seen:
                    starts.add(end)
                end += 1
        return False


def load_sources() -> Sources:
    pieces: set[str] = set()
    joints: set[str] = set()
    for text, whole in collection_texts():
        for piece, joint in literal_pieces(text, whole):
            pieces.add(piece)
            if joint:
                joints.add(piece)
    pieces.update(line for line in map(fold, log_lines()) if line)
    return Sources(pieces, joints)


# -- the guide --------------------------------------------------------------------------------------------------------


def signature_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line in a signature block: the fence right after a `**Signature**` paragraph."""
    index = 0
    while index < len(lines):
        if not lines[index].startswith("**Signature**"):
            index += 1
            continue
        while index < len(lines) and lines[index].strip():  # the rest of the paragraph
            index += 1
        while index < len(lines) and not lines[index].strip():
            index += 1
        if index < len(lines) and lines[index].startswith("```"):
            index += 1
            while index < len(lines) and not lines[index].startswith("```"):
                if lines[index].strip():
                    yield index + 1, lines[index]
                index += 1


def fragments(line: str) -> list[str]:
    """The literal fragments of a signature line: what lies between its placeholders and cuts."""
    stripped = (fold(part).strip(FRAGMENT_EDGES) for part in PLACEHOLDER_OR_CUT.split(line))
    return [fragment for fragment in stripped if len(fragment) >= SHORTEST_FRAGMENT]


def uncovered(sources: Sources, numbered_lines: Iterable[tuple[int, str]]) -> list[str]:
    return [f"line {number}: {fragment!r}" for number, line in numbered_lines for fragment in fragments(line) if not sources.covers(fragment)]


def test_every_signature_says_what_the_collection_prints():
    lines = list(signature_lines(GUIDE.read_text(encoding="utf-8").splitlines()))
    checked = sum(len(fragments(line)) for _number, line in lines)
    assert len(lines) > 80 and checked > 150, f"found only {len(lines)} signature lines ({checked} fragments): is the guide's format changed?"
    missing = uncovered(load_sources(), lines)
    assert not missing, (
        f"{len(missing)} of {checked} fragments of docs/troubleshooting.md's signatures are in no message of the collection "
        "(plugins/, roles/, playbooks/) and no log line of tests/unit/plugins/module_utils/fixtures/. Write the message in "
        "the code's words, with <...> for what changes from run to run (a host, a number, a default the inventory can change: "
        "a lone word or number between two pieces of text counts as one) and ... for cut text; copy a log line verbatim from "
        "a fixture:\n  " + "\n  ".join(missing)
    )


# -- the matcher's own tests, on made-up sources (not fixtures) -------------------------------------------------------

MADE_UP = Sources(["vLLM failed (", "bad_argument", "):", "--", "The GPU ran out of memory: lower it", "ValueError: bad value", "port", "1"])


def test_the_matcher_reports_a_fragment_no_source_holds():
    made_up = [(7, "vLLM failed (bad_argument): <line> -- The GPU ran out of patience: lower it.")]
    assert uncovered(MADE_UP, made_up) == ["line 7: 'The GPU ran out of patience: lower it'"]


def test_the_matcher_takes_a_message_composed_of_pieces_and_placeholders():
    assert uncovered(MADE_UP, [(1, "vLLM failed (bad_argument): ValueError: bad value -- The GPU ran out of memory: ...")]) == []
    assert uncovered(MADE_UP, [(1, "<host>: The GPU ran out of <what>: lower it.")]) == []


def test_the_matcher_takes_no_lone_value_between_two_pieces():
    assert not MADE_UP.covers("port 1 -- The GPU")
    assert Sources(MADE_UP.pieces, joints=["1"]).covers("port 1 -- The GPU")
