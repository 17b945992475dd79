"""Throughput and memory of the vLLM log parser against a loop that only reads the lines.

Builds a log of N lines (default 1,000,000) by repeating the corpus's real lines in order, then
runs, each in a fresh Python process so peak RSS is its own: a plain read loop over the file,
and the parser over the same file. Prints lines/s and peak RSS of each, and their ratio.
Targets: >= 1,000,000 lines/s, ratio <= 3, parser peak RSS < 64 MiB whatever the size.

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


def build_log(path: Path, total: int) -> int:
    lines = []
    for log in sorted([*CORPUS.glob("*/*.log"), *CORPUS.glob("*/*.log.gz")]):
        raw = gzip.decompress(log.read_bytes()) if log.suffix == ".gz" else log.read_bytes()
        lines.extend(raw.decode("utf-8", errors="replace").splitlines(keepends=True))
    with path.open("w", encoding="utf-8") as out:
        written = 0
        while written < total:
            chunk = lines[: total - written]
            out.writelines(line if line.endswith("\n") else line + "\n" for line in chunk)
            written += len(chunk)
    return len(lines)


def run(script: str, log: Path) -> tuple[int, float, float]:
    output = subprocess.run([sys.executable, "-c", script, str(log), str(COLLECTIONS)], capture_output=True, text=True, check=True).stdout.split()
    return int(output[0]), float(output[1]), int(output[2]) / 1024


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as work:
        log = Path(work) / "vllm.log"
        distinct = build_log(log, total)
        size_mib = log.stat().st_size / 2**20
        plain_lines, plain_seconds, plain_rss = run(PLAIN, log)
        parser_lines, parser_seconds, parser_rss = run(PARSER, log)
    assert plain_lines == parser_lines == total, (plain_lines, parser_lines, total)
    figures = {
        "lines": total,
        "distinct_real_lines": distinct,
        "log_mib": round(size_mib, 1),
        "plain_lines_per_s": round(total / plain_seconds),
        "plain_peak_rss_mib": round(plain_rss, 1),
        "parser_lines_per_s": round(total / parser_seconds),
        "parser_peak_rss_mib": round(parser_rss, 1),
        "ratio": round(parser_seconds / plain_seconds, 2),
    }
    width = max(map(len, figures))
    for key, value in figures.items():
        print(f"{key:<{width}}  {value:,}" if isinstance(value, int) else f"{key:<{width}}  {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
