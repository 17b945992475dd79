"""Every rule of the NCCL network reader is needed by a real output: break it and a person-read oracle fails.

_nccl_net.py reads NCCL's own lines for two parsers: nccl-tests output (fixtures/nccl, each with its
.expected.json) and vLLM's log (fixtures/vllm, the corpus). Each rule is broken in turn (rule_breaking.py), the
reader's methods are swapped for the broken ones, and both corpora are read again: at least one output must come
out with other facts than its .expected.json.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from ansible_collections.sparkinfer.cluster.plugins.module_utils import _nccl_net
from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_tests import parse_nccl_tests
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log

from .corpus import LOGS, lines, sidecar, text
from .rule_breaking import Rule, module_without, rules_of

SOURCE = Path(_nccl_net.__file__)
NCCL_FIXTURES = sorted((Path(__file__).parent / "fixtures" / "nccl").glob("*.txt"))
# Rules waiting for a real output that needs them (issue 15). The nccl-tests corpus has no run where NCCL found no
# RDMA device or named the sockets it uses (vLLM's logs have the latter, but its parser reads only the channels);
# channels that stay on one node (P2P, SHM) matter only to a run without a channel between nodes, and the one
# corpus log with P2P channels also has NET/IB ones. The list only shrinks.
WAITING_FOR_AN_OUTPUT_THAT_NEEDS_IT = [
    r"NET/IB\s*:\s*No device found",
    r"NET/Socket\s*:\s*Using\s+(?P<rest>\[.*)$",
    r"\[\d+\](?P<interface>[^\s:\[\]]+):(?P<address>[^\s<]+)",
    r"\bvia (?P<transport>[A-Za-z0-9]+)",
    " via ",
]
METHODS = ("read", "channel_transport", "transport")


def outputs_changed_without(rule: Rule, tree: ast.Module) -> list[str]:
    broken = module_without(rule, tree, SOURCE, "_nccl_net_broken")
    originals = {name: getattr(_nccl_net.NcclNet, name) for name in METHODS}
    try:
        for name in METHODS:
            setattr(_nccl_net.NcclNet, name, getattr(broken.NcclNet, name))
        changed = [
            path.name
            for path in NCCL_FIXTURES
            if parse_nccl_tests(path.read_text(encoding="utf-8")).as_dict()
            != json.loads(path.with_name(f"{path.stem}.expected.json").read_text(encoding="utf-8"))
        ]
        for log in LOGS:
            if "NCCL" not in text(log):
                continue
            got = parse_vllm_log(lines(log))
            if got["error"] is not None:
                got["error"] = {key: got["error"][key] for key in ("category", "line")}
            if got != sidecar(log, "expected"):
                changed.append(log.name)
        return changed
    finally:
        for name, method in originals.items():
            setattr(_nccl_net.NcclNet, name, method)


def test_every_rule_of_the_reader_is_needed_by_a_real_output():
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    rules = rules_of(tree)
    assert {rule.kind for rule in rules} == {"in", "regex"}, [rule.name for rule in rules]
    unneeded = {rule.name: rule.literal for rule in rules if not outputs_changed_without(rule, tree)}
    waiting = {name for name, literal in unneeded.items() if literal in WAITING_FOR_AN_OUTPUT_THAT_NEEDS_IT}
    assert sorted(set(unneeded) - waiting) == [], "rules no real output needs: add one that needs each, or remove it"
    assert sorted(set(WAITING_FOR_AN_OUTPUT_THAT_NEEDS_IT) - set(unneeded.values())) == [], "rules an output needs now: take them off the list"
