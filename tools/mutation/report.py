"""Report make mutation's result per mutated file: the share of mutants the unit tests killed, and every survivor
that tools/mutation/equivalent.yml does not list with the reason it changes nothing. Run in the stage
(.cache/mutation) after `mutmut run`; exits 1 when a file is under the floor, a survivor is unexplained, or the list
names a mutant that no longer survives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tomllib
import yaml

FLOOR = 0.90
# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code): a failing test run (1, or 3 for pytest's own
# error) kills the mutant; a timeout means the mutant hung the tests, which also stops it.
KILLED = {1: "killed", 3: "killed", 36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout"}
SURVIVED = {0: "survived", 5: "no tests", 33: "no tests"}


def read_results(mutants: Path, sources: list[str]) -> dict[str, dict[str, int | None]]:
    """{source file: {mutant name: exit code}} from mutmut's .meta file of each source listed ({} where it has none)."""
    results = {}
    for source in sources:
        meta = mutants / f"{source}.meta"
        results[source] = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    return results


def judge(results: dict[str, dict[str, int | None]], equivalent: dict[str, str]) -> tuple[list[str], list[str]]:
    """The report's lines and the problems that fail it."""
    lines, problems = [], []
    surviving = set()
    for source, codes in results.items():
        if not codes:
            problems.append(f"{source}: no mutant was made or run (is it a Python file of the stage?)")
            continue
        counted = {name: code for name, code in codes.items() if name not in equivalent}
        killed = [name for name, code in counted.items() if code in KILLED]
        survivors = sorted(name for name, code in counted.items() if code in SURVIVED)
        unrun = sorted(name for name, code in counted.items() if code not in KILLED and code not in SURVIVED)
        surviving.update(name for name, code in codes.items() if code in SURVIVED)
        share = len(killed) / len(counted) if counted else 1.0
        lines.append(f"{share:7.1%}  {len(killed):5d} killed  {len(survivors):4d} survived  {len(codes) - len(counted):3d} equivalent  {Path(source).name}")
        if share < FLOOR:
            problems.append(f"{source}: {share:.1%} of its mutants killed, under the {FLOOR:.0%} floor")
        problems.extend(f"survived, not listed as equivalent: {name}" for name in survivors)
        problems.extend(f"not run to the end (mutmut status {codes[name]}): {name}" for name in unrun)
    mutated = {name for codes in results.values() for name in codes}
    for name in sorted(equivalent):
        if name not in mutated:
            problems.append(f"listed as equivalent, but no such mutant (the code moved: renumber or drop it): {name}")
        elif name not in surviving:
            problems.append(f"listed as equivalent, but a test kills it: drop it from the list: {name}")
    return lines, problems


def main() -> int:
    equivalent = yaml.safe_load(Path(sys.argv[1]).read_text()) or {}
    sources = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]["source_paths"]
    results = read_results(Path("mutants"), sources)
    lines, problems = judge(results, equivalent)
    print("killed   (share of the mutants not listed as equivalent, per file)")
    print("\n".join(lines))
    for problem in problems:
        print(f"FAIL {problem}")
    if problems:
        print(f"{len(problems)} problems; see a mutant with: cd {Path.cwd()} && mutmut show NAME", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
