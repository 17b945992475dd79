"""firewall_chain end to end in-process, fed real iptables listings (module_utils/fixtures/iptables/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import firewall_chain

from .module_harness import ModuleFail, RecordingCommands, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "iptables"
COMMENT = "sparkinfer.cluster ray_cluster - Ray ports, cluster nodes only"
TIMEOUT = ("/usr/bin/timeout", "--kill-after=10", "30")
LIST4, LIST6 = (*TIMEOUT, "/usr/bin/iptables", "-w", "-S"), (*TIMEOUT, "/usr/bin/ip6tables", "-w", "-S")
RESTORE4, RESTORE6 = (*TIMEOUT, "/usr/bin/iptables-restore", "-w", "--noflush"), (*TIMEOUT, "/usr/bin/ip6tables-restore", "-w", "--noflush")


def listing(name: str) -> tuple[int, str, str]:
    return 0, (FIXTURES / name).read_text(encoding="utf-8"), ""


def iptables(ipv4: str, ipv6: str, restore: tuple[int, str, str] = (0, "", "")) -> RecordingCommands:
    return RecordingCommands({LIST4: listing(ipv4), LIST6: listing(ipv6), RESTORE4: restore, RESTORE6: restore})


@pytest.fixture
def args(tmp_path) -> dict:
    return {
        "chain": "SPARKINFER-RAY",
        "ports": ["6379", "6380", "6381", "10002:19999"],
        "sources": ["192.168.176.11", "192.168.176.12"],
        "comment": COMMENT,
        "rules_files": {"ipv4": str(tmp_path / "sparkinfer" / "ray-firewall.rules"), "ipv6": str(tmp_path / "sparkinfer" / "ray-firewall6.rules")},
    }


def run(args: dict, commands: RecordingCommands, **extra) -> dict:
    # The module writes its files root-owned; the tests run as whoever runs them.
    with mock.patch("os.chown"):
        return run_module(firewall_chain.main, {**args, **extra}, commands)


def restores(commands: RecordingCommands) -> dict[str, str]:
    return {call[3]: kwargs["data"] for call, kwargs in zip(commands.calls, commands.kwargs) if call[3].endswith("-restore")}


def test_a_chain_in_place_with_its_files_changes_nothing(args):
    first = run(args, iptables("iptables-S.in-place.txt", "ip6tables-S.in-place.txt"))
    assert first["files_changed"] == list(args["rules_files"].values())
    assert first["applied"] == []
    commands = iptables("iptables-S.in-place.txt", "ip6tables-S.in-place.txt")
    again = run(args, commands)
    assert (again["changed"], again["applied"], again["files_changed"]) == (False, [], [])
    assert restores(commands) == {}


def test_the_jump_it_returns_is_the_one_iptables_lists_for_a_boot_unit_to_delete(args):
    result = run(args, iptables("iptables-S.in-place.txt", "ip6tables-S.in-place.txt"))
    listed = (FIXTURES / "iptables-S.in-place.txt").read_text(encoding="utf-8").splitlines()
    assert f"-A INPUT {result['jump']}" in listed


def test_the_rules_files_hold_what_the_boot_unit_loads(args):
    run(args, iptables("iptables-S.in-place.txt", "ip6tables-S.in-place.txt"))
    ipv4 = Path(args["rules_files"]["ipv4"]).read_text(encoding="utf-8").splitlines()
    assert ipv4[0] == "# Written by sparkinfer.cluster.firewall_chain: the ipv4 rules of SPARKINFER-RAY."
    assert ipv4[2:4] == ["*filter", ":SPARKINFER-RAY - [0:0]"]
    assert "-A SPARKINFER-RAY -s 192.168.176.12/32 -j ACCEPT" in ipv4
    assert ipv4[-1] == "COMMIT"
    ipv6 = Path(args["rules_files"]["ipv6"]).read_text(encoding="utf-8")
    assert "-s " not in ipv6
    assert oct(Path(args["rules_files"]["ipv4"]).stat().st_mode & 0o777) == "0o644"


def test_stale_rules_are_replaced_in_one_restore_of_the_family_that_has_them(args):
    run(args, iptables("iptables-S.in-place.txt", "ip6tables-S.in-place.txt"))
    commands = iptables("iptables-S.stale-source-and-jump.txt", "ip6tables-S.in-place.txt")
    result = run(args, commands, _ansible_diff=True)
    assert (result["changed"], result["applied"], result["files_changed"]) == (True, ["ipv4"], [])
    restore = restores(commands)
    assert list(restore) == ["/usr/bin/iptables-restore"]
    assert restore["/usr/bin/iptables-restore"].startswith("*filter\n:SPARKINFER-RAY - [0:0]\n-D INPUT -p tcp -m multiport --dports 6379,10002:19999 ")
    assert "192.168.179.99" in result["diff"][0]["before"]
    assert "192.168.179.99" not in result["diff"][0]["after"]


def test_check_mode_says_what_would_change_and_changes_nothing(args):
    commands = iptables("iptables-S.absent.txt", "ip6tables-S.after-remove.txt")
    result = run(args, commands, _ansible_check_mode=True)
    assert (result["changed"], result["applied"]) == (True, ["ipv4", "ipv6"])
    assert result["files_changed"] == list(args["rules_files"].values())
    assert restores(commands) == {}
    assert not Path(args["rules_files"]["ipv4"]).parent.exists()


def test_absent_removes_the_chain_its_jumps_and_the_rules_files(args):
    run(args, iptables("iptables-S.in-place.txt", "ip6tables-S.in-place.txt"))
    commands = iptables("iptables-S.duplicate-jump.txt", "ip6tables-S.in-place.txt")
    result = run(args, commands, state="absent", ports=[])
    assert (result["applied"], result["files_changed"]) == (["ipv4", "ipv6"], list(args["rules_files"].values()))
    assert restores(commands)["/usr/bin/iptables-restore"].endswith("-F SPARKINFER-RAY\n-X SPARKINFER-RAY\nCOMMIT\n")
    assert not Path(args["rules_files"]["ipv4"]).exists()
    gone = run(args, iptables("iptables-S.after-remove.txt", "ip6tables-S.after-remove.txt"), state="absent", ports=[])
    assert gone["changed"] is False


def test_rules_iptables_rejects_fail_the_module_with_its_message(args):
    refused = (2, "", "iptables-restore v1.8.9 (nf_tables): line 3 failed\n")
    with pytest.raises(ModuleFail) as failed:
        run(args, iptables("iptables-S.absent.txt", "ip6tables-S.in-place.txt", refused))
    assert failed.value.result["msg"] == "iptables-restore rejected the rules of SPARKINFER-RAY (rc=2): iptables-restore v1.8.9 (nf_tables): line 3 failed"


def test_a_wedged_iptables_is_named(args):
    with pytest.raises(ModuleFail) as failed:
        run(args, RecordingCommands({LIST4: (124, "", "")}))
    assert failed.value.result["msg"].startswith("`/usr/bin/iptables -w -S` did not finish within 30 s and was stopped")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"chain": "sparkinfer-ray"}, "chain must be 1 to 28 upper-case letters, digits and dashes starting with a letter, not 'sparkinfer-ray'"),
        ({"ports": ["6379", "ray"]}, "ports must be TCP ports or MIN:MAX ranges, not ['6379', 'ray']"),
        ({"ports": [f"{port}:{port + 1}" for port in range(8)]}, "ports holds more than 15 ports, a range counting two"),
        ({"ports": []}, "ports is empty: give the TCP ports the chain guards"),
        ({"sources": ["192.168.176.0/24"]}, "sources must be IPv4 addresses, not ['192.168.176.0/24']"),
        ({"comment": 'ray" -j ACCEPT'}, "comment must be 1 to 200 letters, digits, spaces and ._,:()/-"),
        ({"rules_files": {"ipv4": "relative.rules"}}, "rules_files takes the keys ipv4 and ipv6, each an absolute path"),
        ({"rules_files": {"nft": "/etc/x"}}, "rules_files takes the keys ipv4 and ipv6, each an absolute path"),
        ({"command_timeout": 0}, "command_timeout must be a positive number of seconds, not 0"),
    ],
)
def test_bad_options_are_refused_before_any_command_naming_the_option(args, override, message):
    commands = iptables("iptables-S.absent.txt", "ip6tables-S.in-place.txt")
    with pytest.raises(ModuleFail) as failed:
        run(args, commands, **override)
    assert message in failed.value.result["msg"]
    assert commands.calls == []
