"""make mutation's verdict (tools/mutation/report.py) on real mutmut result files (fixtures/mutmut/SOURCES.md)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "mutation"))
import report  # noqa: E402

MUTANTS = Path(__file__).parent / "fixtures" / "mutmut"
FIREWALL = "ansible_collections/sparkinfer/cluster/plugins/filter/firewall.py"
RECIPE = "ansible_collections/sparkinfer/cluster/plugins/module_utils/_recipe.py"
FIREWALL_MUTANT = "ansible_collections.sparkinfer.cluster.plugins.filter.firewall.x_firewall_input_jumps__mutmut_"


def read() -> dict:
    return report.read_results(MUTANTS, [FIREWALL, RECIPE])


def test_the_result_files_of_the_sources_listed_are_read():
    results = read()
    assert sorted(results) == [FIREWALL, RECIPE]
    assert len(results[FIREWALL]) == 15
    assert len(results[RECIPE]) == 403
    assert report.read_results(MUTANTS, [FIREWALL]).keys() == {FIREWALL}


def test_a_source_listed_without_results_fails_it():
    missing = "ansible_collections/sparkinfer/cluster/plugins/module_utils/_gone.py"
    lines, problems = report.judge(report.read_results(MUTANTS, [FIREWALL, missing]), {})
    assert len(lines) == 1
    assert f"{missing}: no mutant was made or run (is it a Python file of the stage?)" in problems


def test_a_file_under_the_floor_and_each_unlisted_survivor_fail_it():
    lines, problems = report.judge(read(), {})
    assert lines[0] == "  26.7%      4 killed    11 survived    0 equivalent  firewall.py"
    # 335 killed and the two stopped for their CPU time (the mutant hung the tests): 337 of 403.
    assert lines[1] == "  83.6%    337 killed    66 survived    0 equivalent  _recipe.py"
    assert f"{FIREWALL}: 26.7% of its mutants killed, under the 90% floor" in problems
    assert f"{RECIPE}: 83.6% of its mutants killed, under the 90% floor" in problems
    assert f"survived, not listed as equivalent: {FIREWALL_MUTANT}1" in problems
    assert f"survived, not listed as equivalent: {FIREWALL_MUTANT}5" not in problems  # killed
    assert len(problems) == 2 + 11 + 66


def test_a_listed_survivor_leaves_the_count_and_a_stale_listing_fails():
    equivalent = {
        f"{FIREWALL_MUTANT}1": "a reason",
        f"{FIREWALL_MUTANT}5": "a test kills it",
        f"{FIREWALL_MUTANT}99": "no such mutant",
    }
    lines, problems = report.judge(read(), equivalent)
    # Of the 13 counted (15, less the listed 1 and 5), 3 killed: mutants 8 and the FilterModule's two.
    assert lines[0] == "  23.1%      3 killed    10 survived    2 equivalent  firewall.py"
    assert f"survived, not listed as equivalent: {FIREWALL_MUTANT}1" not in problems
    assert f"listed as equivalent, but a test kills it: drop it from the list: {FIREWALL_MUTANT}5" in problems
    assert f"listed as equivalent, but no such mutant (the code moved: renumber or drop it): {FIREWALL_MUTANT}99" in problems
