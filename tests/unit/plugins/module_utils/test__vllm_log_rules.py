"""Every rule of the vLLM log parser is needed by a real log of the corpus: break it and a log's facts change.

A rule is a literal the parser tests lines with (`"..." in text`, `.startswith("...")`), a key of the scanner's
handler table, or a module-level regex. Each is broken in turn: the parser is rebuilt from its source with that
literal replaced by one no log holds (a regex by one that never matches), and reads every corpus log the rule
can touch. At least one must come out with other facts than its person-read .expected.json (the error's hint
aside, as in test__vllm_log_corpus.py). The hints hold no rule: each failure wording of the table has its own.

The rules still waiting for a real log that needs them (issue 15), and the two patterns read only into a hint
(which hint tests cover), are listed; the test keeps the list exact: one that becomes needed leaves it.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path

from ansible_collections.sparkinfer.cluster.plugins.module_utils import _vllm_log

from .corpus import LOGS, lines, sidecar, text
from .rule_breaking import Rule, module_without, rules_of

SOURCE = Path(_vllm_log.__file__)
# Rules no real log of the corpus needs yet (issue 15 §6): each waits for a real log that needs it, or leaves the
# parser and the docs. The list only shrinks.
WAITING_FOR_A_LOG_THAT_HOLDS_IT: list[str] = []
# Patterns read only into the error's hint, which the corpus's oracle does not hold: the hint tests of
# test__vllm_log_corpus.py break with them (the length that fits in the KV cache, in V1's wording).
READ_ONLY_INTO_THE_HINT = [
    r"estimated maximum model length is (\d+)",
]
# Literals that mark torch.compile and FlashInfer's autotuning, read only into the scanner's `compiling` (the wait's
# longer stall bound), which the corpus's oracle does not hold: the compile tests of test__vllm_wait.py replay real
# GB10 logs to each marker and break with them.
READ_ONLY_INTO_THE_STALL_BOUND = [
    "Dynamo",
    "Dynamo bytecode transform time",
    "[Autotuner]",
    "[Autotuner]: Autotuning process",
    "process starts",
]
# Every corpus log that holds the literal reaches the same facts through another rule: a log where only this one
# reads them is missing (or the rule is redundant and goes).
WAITING_FOR_A_LOG_ONLY_IT_READS = [
    *(
        "ncclInternalError",
        "timed out",
        "No available memory for the cache blocks",
        "OutOfMemoryError",
        "error: ",
        "imeout",
        "\r",
        "=",
        "all-reduce",
        "MoEPrepare",
    ),
    *("Model architectures", "See root cause above", "NCCL WARN ", "NCCL version ", "DP group leader", "Starting vLLM API server"),
    *("Available routes are:", "Route: "),
    # handler table keys
    *("args:", "DP", "Route:", "Available", "Uvicorn", "torch.compile", "Compiling", "NCCL"),
]
# The rules this test lets pass without a log whose facts need them.
EXCUSED = {*WAITING_FOR_A_LOG_THAT_HOLDS_IT, *READ_ONLY_INTO_THE_HINT, *READ_ONLY_INTO_THE_STALL_BOUND, *WAITING_FOR_A_LOG_ONLY_IT_READS}


def facts(parser: types.ModuleType, log: Path) -> dict:
    got = parser.parse_vllm_log(lines(log))
    if got["error"] is not None:
        got["error"] = {key: got["error"][key] for key in ("category", "line")}
    return got


TREE = ast.parse(SOURCE.read_text(encoding="utf-8"))
RULES = rules_of(TREE)
TEXTS = {log: text(log) for log in LOGS}
EXPECTED = {log: sidecar(log, "expected") for log in LOGS}


def logs_changed_without(rule: Rule) -> list[str]:
    """The logs whose facts change when the rule is broken."""
    parser = module_without(rule, TREE, SOURCE, "_vllm_log_broken")
    return [log.name for log in LOGS if rule.touches(TEXTS[log]) and facts(parser, log) != EXPECTED[log]]


def test_the_parser_has_rules_of_every_kind():
    kinds = {rule.kind for rule in RULES}
    assert kinds == {"in", "startswith", "endswith", "regex", "handler"}, kinds
    assert len(RULES) > 100, len(RULES)


def test_every_rule_is_needed_by_a_real_log():
    unneeded = {rule.name: rule.literal for rule in RULES if not logs_changed_without(rule)}
    waiting = {name for name, literal in unneeded.items() if literal in EXCUSED}
    assert sorted(set(unneeded) - waiting) == [], "rules no corpus log needs: add a real log that needs each, or remove it"
    assert sorted(set(EXCUSED) - set(unneeded.values())) == [], "rules that a log needs now: take them off EXCUSED"
