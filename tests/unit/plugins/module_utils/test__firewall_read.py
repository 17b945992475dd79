"""Whether INPUT of iptables and ip6tables still jumps to a firewall chain (_firewall_read.py).

The listings are real iptables -S and ip6tables -S outputs of the lab node image with Ray's chain in place, and with
only the host's own rules (tests/unit/plugins/module_utils/fixtures/iptables, SOURCES.md there).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.firewall import FilterModule, firewall_input_jumps
from ansible_collections.sparkinfer.cluster.plugins.module_utils._firewall_read import input_jumps

LISTINGS = Path(__file__).parent / "fixtures" / "iptables"
GUARDED = (LISTINGS / "iptables-S.in-place.txt").read_text(encoding="utf-8")
GUARDED6 = (LISTINGS / "ip6tables-S.in-place.txt").read_text(encoding="utf-8")
OPEN = (LISTINGS / "iptables-S.absent.txt").read_text(encoding="utf-8")
OPEN6 = (LISTINGS / "ip6tables-S.after-remove.txt").read_text(encoding="utf-8")


def read(command: str, stdout: str, rc: int = 0) -> dict:
    return {"item": command, "rc": rc, "stdout": stdout}


def test_both_families_guarded():
    assert input_jumps([read("iptables", GUARDED), read("ip6tables", GUARDED6)], "SPARKINFER-RAY") == {"guards": True, "open": []}


def test_one_family_without_the_jump_is_named():
    assert input_jumps([read("iptables", GUARDED), read("ip6tables", OPEN6)], "SPARKINFER-RAY") == {"guards": False, "open": ["ip6tables"]}
    assert input_jumps([read("iptables", OPEN), read("ip6tables", OPEN6)], "SPARKINFER-RAY") == {"guards": False, "open": ["iptables", "ip6tables"]}


def test_a_jump_to_another_chain_is_not_this_one():
    # The chain's own rules name it too (-A SPARKINFER-RAY ...): only INPUT's jump counts.
    assert input_jumps([read("iptables", GUARDED)], "SPARKINFER-VLLM") == {"guards": False, "open": ["iptables"]}
    assert input_jumps([read("iptables", GUARDED)], "SPARKINFER-RA") == {"guards": False, "open": ["iptables"]}


@pytest.mark.parametrize("results", [[], [read("iptables", "", rc=127)], [{"item": "ip6tables", "skipped": True}]])
def test_nothing_read_says_nothing(results):
    assert input_jumps(results, "SPARKINFER-RAY") == {"guards": None, "open": []}


def test_the_filter_reads_the_loop_results_for_the_chain_named():
    results = [read("iptables", GUARDED), read("ip6tables", OPEN6)]
    assert firewall_input_jumps(results, "SPARKINFER-RAY") == {"guards": False, "open": ["ip6tables"]}
    assert firewall_input_jumps([read("iptables", GUARDED)], "SPARKINFER-RAY") == {"guards": True, "open": []}


@pytest.mark.parametrize(
    "results",
    [{"results": [read("iptables", GUARDED)]}, [GUARDED, GUARDED6]],
    ids=["the-registered-result-itself", "the-stdouts-alone"],
)
def test_the_filter_wants_loop_results(results):
    assert FilterModule().filters() == {"firewall_input_jumps": firewall_input_jumps}
    with pytest.raises(AnsibleFilterError) as raised:
        firewall_input_jumps(results, "SPARKINFER-RAY")
    assert str(raised.value) == "firewall_input_jumps: expected the loop results of iptables -S INPUT and ip6tables -S INPUT"
