"""Run the failure drills and print, per drill, the seconds from the start of the failing playbook to the failure.

Against the lab that `make site` brought up (the default inventory, inventories/lab), or any pair
that site.yml converged; the drills restore the pair after each one. With --molecule the e2e
scenario builds its own pair first and runs its serving checks, the drills and teardown on it
(`molecule test -s e2e`, about 30 min on 2 cores).

    python3 bench/drills.py                    # all drills on the running lab
    python3 bench/drills.py -k "drill_2 or drill_5"
    python3 bench/drills.py --molecule
    python3 bench/drills.py --report-only      # print the last report again
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "extensions" / "molecule" / "e2e" / "tests" / "test_2_drills.py"
REPORT = REPO / ".cache" / "drills" / "report.json"


def run_drills(inventory: Path, selection: str | None) -> int:
    env = {**os.environ, "MOLECULE_INVENTORY_FILE": str(inventory), "SPARKINFER_DRILL_REPORT": str(REPORT)}
    argv = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(TESTS)]
    if selection:
        argv += ["-k", selection]
    return subprocess.run(argv, cwd=TESTS.parent, env=env, check=False).returncode


def run_scenario() -> int:
    env = {**os.environ, "SPARKINFER_DRILL_REPORT": str(REPORT)}
    return subprocess.run(["molecule", "test", "-s", "e2e"], cwd=REPO, env=env, check=False).returncode


def print_report() -> None:
    report = json.loads(REPORT.read_text(encoding="utf-8"))
    width = max(len(drill) for drill in report)
    print(f"{'drill':<{width}}  {'seconds':>8}  {'bound':>6}  detected by")
    for drill, row in report.items():
        print(f"{drill:<{width}}  {row['seconds']:>8.1f}  {row['bound']:>6.0f}  {row['detected']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", type=Path, default=REPO / "inventories" / "lab" / "hosts.yml", help="a pair site.yml converged")
    parser.add_argument("-k", dest="selection", help="pytest -k expression choosing drills")
    parser.add_argument("--molecule", action="store_true", help="run the e2e scenario, which builds its own pair")
    parser.add_argument("--report-only", action="store_true", help="print the last report without running anything")
    args = parser.parse_args()
    code = 0
    if not args.report_only:
        REPORT.unlink(missing_ok=True)
        code = run_scenario() if args.molecule else run_drills(args.inventory, args.selection)
    if REPORT.exists():
        print_report()
    else:
        print(f"no report at {REPORT}: no drill finished", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
