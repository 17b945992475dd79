"""rsync's itemized changes of a push, read from real rsync 3.2.7 outputs (fixtures/rsync/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._rsync_itemize import PushPlan, read_itemized

FIXTURES = Path(__file__).parent / "fixtures" / "rsync"


def plan(name: str) -> PushPlan:
    return read_itemized((FIXTURES / f"{name}.txt").read_text(encoding="utf-8"))


# What each push sends and what only the receiving side holds, read off each output by hand.
EXPECTED = {
    "dry-run-into-an-empty-directory": (("config.json", "model.safetensors", "sub/tokenizer.json"), ()),
    "copy-into-an-empty-directory": (("config.json", "model.safetensors", "sub/tokenizer.json"), ()),
    "dry-run-of-an-equal-copy": ((), ()),
    "dry-run-of-an-equal-copy-into-a-directory-of-another-time": ((), ()),
    "dry-run-with-a-changed-file-and-an-extra-file": (("config.json",), ("notes.txt",)),
    "copy-of-a-changed-file-beside-an-extra-file": (("config.json",), ()),
    "dry-run-after-a-copy-beside-an-extra-file": ((), ("notes.txt",)),
    "dry-run-of-a-file-with-another-time": (("model.safetensors",), ()),
    "dry-run-checksum-of-a-file-with-another-time": ((), ()),
    "dry-run-of-a-link-out-of-the-directory": (("linked.json", "model.safetensors"), ()),
    "copy-of-a-link-out-of-the-directory": (("linked.json", "model.safetensors"), ()),
}


def test_every_captured_output_has_its_expectation():
    assert {path.stem for path in FIXTURES.glob("*.txt")} - {"VERSION"} == set(EXPECTED)


@pytest.mark.parametrize(("name", "expected"), EXPECTED.items(), ids=list(EXPECTED))
def test_what_a_push_sends_and_what_only_the_receiving_side_holds(name, expected):
    assert plan(name) == PushPlan(sent=expected[0], extra=expected[1])
