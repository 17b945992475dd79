"""The vLLM log corpus: fixtures/vllm/{public,lab}/<stem>.log[.gz] with .source.json and .expected.json, and
fixtures/vllm/reading.yml, what a person read off each log.

Captured logs are gzipped because they hold vLLM's own carriage returns (progress bars), which
plain text files of a collection may not (ansible-test's line-endings check); gzip keeps their
bytes exactly as vLLM wrote them.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import yaml

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import VllmLogScanner

CORPUS = Path(__file__).parent / "fixtures" / "vllm"
LOGS = sorted([*CORPUS.glob("*/*.log"), *CORPUS.glob("*/*.log.gz")])


def stem(log: Path) -> str:
    return log.name.removesuffix(".gz").removesuffix(".log")


def text(log: Path) -> str:
    raw = gzip.decompress(log.read_bytes()) if log.suffix == ".gz" else log.read_bytes()
    return raw.decode("utf-8", errors="replace")


def lines(log: Path) -> list[str]:
    """The log's lines as a file object in text mode yields them (universal newlines)."""
    return text(log).replace("\r\n", "\n").replace("\r", "\n").splitlines(keepends=True)


def sidecar(log: Path, kind: str) -> dict:
    return json.loads((log.parent / f"{stem(log)}.{kind}.json").read_text(encoding="utf-8"))


def public(name: str) -> list[str]:
    """The lines of a public log of the corpus, by its name."""
    return lines(CORPUS / "public" / f"{name}.log")


def trace(log_lines: list[str]) -> list[tuple[int, str]]:
    """(line number, stage) for each stage the first time a line shows it, the lines fed one at a time."""
    scanner = VllmLogScanner()
    seen: list[tuple[int, str]] = []
    for number, line in enumerate(log_lines, start=1):
        scanner.feed([line])
        seen += [(number, stage) for stage in scanner.stages_seen()[len(seen) :]]
    assert scanner.lines_seen == len(log_lines)
    return seen


def lab_log(name: str) -> Path:
    return CORPUS / "lab" / f"{name}.log.gz"


# Every fact the parser gives, as each .expected.json holds them.
FACT_KEYS = (
    "vllm_version",
    "engine",
    "architecture",
    "quantization",
    "dtype",
    "max_model_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "attention_backend",
    "moe_backend",
    "load_format",
    "speculative_method",
    "custom_fusions",
    "kv_cache_tokens",
    "max_concurrency",
    "model_weights_gib",
    "nccl_version",
    "nccl_transport",
    "world_size",
    "stage",
    "outcome",
    "error",
    "warnings",
)
# What a person read off each log (fixtures/vllm/reading.yml): these facts and the decisive error line. Not read: the
# loader, speculative decoding and fusions of the engine config, concurrency and weights' size, NCCL's, the warnings.
READING = CORPUS / "reading.yml"
NOT_READ = (
    "load_format",
    "speculative_method",
    "custom_fusions",
    "max_concurrency",
    "model_weights_gib",
    "nccl_version",
    "nccl_transport",
    "world_size",
    "error",
    "warnings",
)
READ_FACTS = tuple(key for key in FACT_KEYS if key not in NOT_READ)


def reading() -> dict[str, dict]:
    """Each log's reading, by its path under fixtures/vllm/ (lab/NAME.log.gz, public/NAME.log)."""
    return yaml.safe_load(READING.read_text(encoding="utf-8"))


def read_name(log: Path) -> str:
    return f"{log.parent.name}/{log.name}"


def contradictions(row: dict, facts: dict) -> list[str]:
    """Each fact the parser gives otherwise than the reading of the log, as `fact: read X, parsed Y`."""
    said = [(key, row[key]["value"], facts.get(key)) for key in READ_FACTS]
    said.append(("error_line", row["error_line"]["value"], (facts.get("error") or {}).get("line")))
    return [f"{key}: read {read!r}, parsed {parsed!r}" for key, read, parsed in said if read != parsed]
