"""Throughput and memory of the vLLM log parser against a loop that only reads the lines.

Two logs of N lines each (default 1,000,000), both made of real lines only:
- server: one real start of the lab's vLLM (lab/0.32.0-steady-state.log.gz, up to its first
  request), then that log's steady-state lines (access lines and engine metrics lines), cycled:
  what grows without bound is a long-running server's log. Target: ratio <= 3.
- startup-dense: every log of the corpus in order, repeated (no target: it must not regress).
Each is read, in a fresh Python process so peak RSS is its own, by a plain read loop and by the
parser. Prints lines/s and peak RSS of each and their ratio. Target: parser peak RSS < 64 MiB.

Usage: python bench/vllm_log_parser.py [LINES]
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "unit" / "plugins" / "module_utils" / "fixtures" / "vllm"
STEADY_STATE = CORPUS / "lab" / "0.32.0-steady-state.log.gz"
COLLECTIONS = REPO / ".cache" / "collections"

PLAIN = """
import resource, sys, time
start = time.perf_counter()
count = 0
with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
    for line in handle:
        count += 1
elapsed = time.perf_counter() - start
print(count, elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

PARSER = """
import resource, sys, time
sys.path.insert(0, sys.argv[2])
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import VllmLogScanner
scanner = VllmLogScanner()
start = time.perf_counter()
with open(sys.argv[1], encoding="utf-8", errors="replace") as handle:
    scanner.feed(handle)
elapsed = time.perf_counter() - start
print(scanner.lines_seen, elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def corpus_lines(log: Path) -> list[str]:
    raw = gzip.decompress(log.read_bytes()) if log.suffix == ".gz" else log.read_bytes()
    return [line if line.endswith("\n") else line + "\n" for line in raw.decode("utf-8", errors="replace").splitlines(keepends=True)]


def startup_dense_lines() -> tuple[list[str], list[str]]:
    """No start of its own: every log of the corpus, the whole corpus repeated."""
    lines = []
    for log in sorted([*CORPUS.glob("*/*.log"), *CORPUS.glob("*/*.log.gz")]):
        lines.extend(corpus_lines(log))
    return [], lines


def server_lines() -> tuple[list[str], list[str]]:
    """The real start of the steady-state capture, then its serving lines (after the first request) to cycle."""
    lines = corpus_lines(STEADY_STATE)
    first_request = next(index for index, line in enumerate(lines) if '"POST /v1/chat/completions HTTP/1.1"' in line)
    serving = [line for line in lines[first_request:] if '"POST /v1/' in line or "Avg prompt throughput" in line]
    return lines[:first_request], serving


def write_log(path: Path, total: int, start: list[str], cycled: list[str]) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.writelines(start)
        written = len(start)
        while written < total:
            chunk = cycled[: total - written]
            out.writelines(chunk)
            written += len(chunk)


def run(script: str, log: Path) -> tuple[int, float, float]:
    output = subprocess.run([sys.executable, "-c", script, str(log), str(COLLECTIONS)], capture_output=True, text=True, check=True).stdout.split()
    return int(output[0]), float(output[1]), int(output[2]) / 1024


def measure(name: str, total: int, start: list[str], cycled: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "vllm.log"
        write_log(log, total, start, cycled)
        size_mib = log.stat().st_size / 2**20
        plain_lines, plain_seconds, plain_rss = run(PLAIN, log)
        parser_lines, parser_seconds, parser_rss = run(PARSER, log)
    assert plain_lines == parser_lines == total, (plain_lines, parser_lines, total)
    return {
        "mix": name,
        "lines": total,
        "start_lines": len(start),
        "cycled_real_lines": len(cycled),
        "log_mib": round(size_mib, 1),
        "plain_lines_per_s": round(total / plain_seconds),
        "plain_peak_rss_mib": round(plain_rss, 1),
        "parser_lines_per_s": round(total / parser_seconds),
        "parser_peak_rss_mib": round(parser_rss, 1),
        "ratio": round(parser_seconds / plain_seconds, 2),
    }


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    for name, lines in (("server", server_lines), ("startup-dense", startup_dense_lines)):
        figures = measure(name, total, *lines())
        width = max(map(len, figures))
        for key, value in figures.items():
            print(f"{key:<{width}}  {value:,}" if isinstance(value, int) else f"{key:<{width}}  {value}")
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
