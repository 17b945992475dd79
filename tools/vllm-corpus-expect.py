"""Review tool for the vLLM log corpus: show where the parser's facts differ from each log's
.expected.json, and (with --write LOG...) record the parser's facts for logs a person has read
and found right. Never run --write over the whole corpus unread: the sidecars are the test oracle.

Usage: python tools/vllm-corpus-expect.py [--write] LOG...
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / ".cache" / "collections"))

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log


def comparable(facts: dict) -> dict:
    facts = dict(facts)
    if facts.get("error"):
        facts["error"] = {key: facts["error"][key] for key in ("category", "line")}
    return facts


def main(argv: list[str]) -> int:
    write = "--write" in argv
    logs = [Path(arg) for arg in argv if arg != "--write"]
    for log in logs:
        raw = gzip.decompress(log.read_bytes()) if log.suffix == ".gz" else log.read_bytes()
        text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        got = comparable(parse_vllm_log(text.splitlines(keepends=True)))
        sidecar = log.parent / (log.name.removesuffix(".gz").removesuffix(".log") + ".expected.json")
        expected = json.loads(sidecar.read_text()) if sidecar.exists() else {}
        diffs = {key: (expected.get(key), got[key]) for key in got if expected.get(key) != got[key]}
        if diffs:
            print(f"== {log.name}")
            for key, (old, new) in diffs.items():
                print(f"   {key}: {json.dumps(old)[:150]} -> {json.dumps(new)[:150]}")
        if write:
            sidecar.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
