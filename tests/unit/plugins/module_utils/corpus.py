"""The vLLM log corpus: fixtures/vllm/{public,lab}/<stem>.log[.gz] with .source.json and .expected.json.

Captured logs are gzipped because they hold vLLM's own carriage returns (progress bars), which
plain text files of a collection may not (ansible-test's line-endings check); gzip keeps their
bytes exactly as vLLM wrote them.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

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


def lab_log(name: str) -> Path:
    return CORPUS / "lab" / f"{name}.log.gz"
