"""The parser against a person's reading of every log of the corpus (fixtures/vllm/reading.yml).

The .expected.json sidecars hold every fact the parser gives, and were written from it once a person had checked them:
they notice when the parser changes. The reading was made from the logs alone, by readers who saw neither the parser nor
the sidecars: it notices when the parser is wrong. Each fact it states stands on the line it names.
"""

from __future__ import annotations

import re

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log

from .corpus import LOGS, READ_FACTS, contradictions, lines, read_name, reading, text

READING = reading()
# The facts whose words a log prints as the reading writes them (numbers as digits, with or without thousands commas).
WORDED = ("vllm_version", "architecture", "max_model_len", "tensor_parallel_size", "pipeline_parallel_size", "kv_cache_tokens", "error_line")


def test_every_log_is_read_and_every_reading_is_a_log():
    assert sorted(READING) == sorted(read_name(log) for log in LOGS)
    assert all(set(row) >= {*READ_FACTS, "error_line"} for row in READING.values())


@pytest.mark.parametrize("log", LOGS, ids=read_name)
def test_the_parser_reads_what_a_person_read(log):
    facts = parse_vllm_log(lines(log))
    assert contradictions(READING[read_name(log)], facts) == []


def _said_on(line: str, value: object) -> bool:
    if isinstance(value, int):
        return re.search(rf"(?<![\d,]){value:,}(?![\d,])|(?<!\d){value}(?!\d)", line) is not None
    return str(value) in line


@pytest.mark.parametrize("log", LOGS, ids=read_name)
def test_each_worded_fact_stands_on_the_line_the_reading_names(log):
    numbered = text(log).split("\n")
    row = READING[read_name(log)]
    for key in WORDED:
        fact = row[key]
        if fact["value"] is None:
            assert "line" not in fact, f"{key} is null but names line {fact.get('line')}"
            continue
        assert _said_on(numbered[fact["line"] - 1], fact["value"]), f"{key} {fact['value']!r} is not on line {fact['line']}"


def test_a_contradiction_names_the_fact_and_both_readings():
    row = {key: {"value": None} for key in (*READ_FACTS, "error_line")} | {"stage": {"value": "ready", "line": 3}}
    assert contradictions(row, {"stage": "kv_cache_ready"}) == ["stage: read 'ready', parsed 'kv_cache_ready'"]
