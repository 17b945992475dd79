"""Review tool for the vLLM log corpus: show where the parser's facts differ from each log's .expected.json, and (with
--write LOG...) record the parser's facts for logs a person has read and found right.

The sidecars are the test oracle of every fact; fixtures/vllm/reading.yml is a person's reading of each log, made from
the log alone. --write refuses a log whose parsed facts contradict that reading (and says which): mend the parser, or
the reading where the log's text says otherwise, first. Never run --write over the whole corpus unread.

Usage: python tools/vllm-corpus-expect.py [--write] LOG...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / ".cache" / "collections"))

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log
from ansible_collections.sparkinfer.cluster.tests.unit.plugins.module_utils.corpus import contradictions, lines, read_name, reading, stem


def comparable(facts: dict) -> dict:
    facts = dict(facts)
    if facts.get("error"):
        facts["error"] = {key: facts["error"][key] for key in ("category", "line")}
    return facts


def main(argv: list[str]) -> int:
    write = "--write" in argv
    logs = [Path(arg) for arg in argv if arg != "--write"]
    read = reading()
    refused = 0
    for log in logs:
        got = comparable(parse_vllm_log(lines(log)))
        sidecar = log.parent / f"{stem(log)}.expected.json"
        expected = json.loads(sidecar.read_text(encoding="utf-8")) if sidecar.exists() else {}
        diffs = {key: (expected.get(key), got[key]) for key in got if expected.get(key) != got[key]}
        if diffs:
            print(f"== {log.name}")
            for key, (old, new) in diffs.items():
                print(f"   {key}: {json.dumps(old)[:150]} -> {json.dumps(new)[:150]}")
        against = contradictions(read[read_name(log)], got) if read_name(log) in read else ["the log has no reading in reading.yml"]
        if against:
            refused += 1
            print(f"!! {log.name}: the parser contradicts the reading of the log, not written: {'; '.join(against)}")
        elif write:
            sidecar.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
