"""The firewall chain's rules against real iptables listings (fixtures/iptables/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.sparkinfer.cluster.plugins.module_utils._iptables_chain import (
    Chain,
    absent,
    in_place,
    read_running,
    restore_to_put,
    restore_to_remove,
    shown,
    wanted_shown,
)

FIXTURES = Path(__file__).parent / "fixtures" / "iptables"
COMMENT = "sparkinfer.cluster ray_cluster - Ray ports, cluster nodes only"
RAY = Chain("SPARKINFER-RAY", ("6379", "6380", "6381", "10002:19999"), ("192.168.176.11", "192.168.176.12"), COMMENT)
JUMP = f'-A INPUT -p tcp -m multiport --dports 6379,6380,6381,10002:19999 -m comment --comment "{COMMENT}" -j SPARKINFER-RAY'
STALE_JUMP = f'-A INPUT -p tcp -m multiport --dports 6379,10002:19999 -m comment --comment "{COMMENT}" -j SPARKINFER-RAY'


def running(name: str):
    return read_running((FIXTURES / name).read_text(encoding="utf-8"), RAY.name)


def test_the_chain_in_place_is_read_as_iptables_lists_it():
    ray = running("iptables-S.in-place.txt")
    assert ray.exists
    assert ray.jumps == [JUMP]
    assert ray.rules == [
        "-A SPARKINFER-RAY -i lo -j ACCEPT",
        "-A SPARKINFER-RAY -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A SPARKINFER-RAY -s 192.168.176.11/32 -j ACCEPT",
        "-A SPARKINFER-RAY -s 192.168.176.12/32 -j ACCEPT",
        "-A SPARKINFER-RAY -j DROP",
    ]
    assert in_place(ray, RAY, "ipv4")


def test_the_ipv6_chain_has_no_sources_and_is_in_place():
    ray = running("ip6tables-S.in-place.txt")
    assert len(ray.rules) == 3
    assert in_place(ray, RAY, "ipv6")
    # The same listing is not what IPv4 wants: its sources are missing.
    assert not in_place(ray, RAY, "ipv4")


def test_a_stale_source_and_a_jump_for_earlier_ports_are_differences():
    ray = running("iptables-S.stale-source-and-jump.txt")
    assert ray.jumps == [STALE_JUMP, JUMP]
    assert "-A SPARKINFER-RAY -s 192.168.179.99/32 -j ACCEPT" in ray.rules
    assert not in_place(ray, RAY, "ipv4")


def test_the_input_that_puts_the_chain_back_deletes_every_jump_and_declares_the_chain_first():
    restore = restore_to_put(running("iptables-S.stale-source-and-jump.txt"), RAY, "ipv4").splitlines()
    assert restore == [
        "*filter",
        ":SPARKINFER-RAY - [0:0]",
        STALE_JUMP.replace("-A INPUT", "-D INPUT"),
        JUMP.replace("-A INPUT", "-D INPUT"),
        # The IPv4 chain lets in the cluster's sources, and no longer the stale one.
        "-A SPARKINFER-RAY -i lo -j ACCEPT",
        "-A SPARKINFER-RAY -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A SPARKINFER-RAY -s 192.168.176.11/32 -j ACCEPT",
        "-A SPARKINFER-RAY -s 192.168.176.12/32 -j ACCEPT",
        "-A SPARKINFER-RAY -j DROP",
        JUMP.replace("-A INPUT", "-I INPUT 1"),
        "COMMIT",
    ]
    # iptables-restore of that input left the listing the chain in place has (captured, not assumed).
    assert (FIXTURES / "iptables-S.after-put.txt").read_text() == (FIXTURES / "iptables-S.in-place.txt").read_text()


def test_a_duplicate_jump_is_a_difference():
    ray = running("iptables-S.duplicate-jump.txt")
    assert ray.jumps == [JUMP, JUMP]
    assert ray.rules == running("iptables-S.in-place.txt").rules
    assert not in_place(ray, RAY, "ipv4")


def test_the_input_that_removes_the_chain_deletes_the_jumps_then_empties_and_deletes_it():
    restore = restore_to_remove(running("iptables-S.duplicate-jump.txt"), RAY.name).splitlines()
    assert restore == [
        "*filter",
        JUMP.replace("-A INPUT", "-D INPUT"),
        JUMP.replace("-A INPUT", "-D INPUT"),
        "-F SPARKINFER-RAY",
        "-X SPARKINFER-RAY",
        "COMMIT",
    ]
    for name in ("iptables-S.after-remove.txt", "ip6tables-S.after-remove.txt", "iptables-S.absent.txt"):
        assert absent(running(name)), name
    assert not absent(running("iptables-S.in-place.txt"))
    # The host's own rules and Docker's chain were left as they were.
    assert (FIXTURES / "iptables-S.after-remove.txt").read_text() == (FIXTURES / "iptables-S.absent.txt").read_text()


def test_a_chain_left_without_its_jump_or_a_jump_left_without_its_chain_is_not_absent():
    listing = (FIXTURES / "iptables-S.in-place.txt").read_text(encoding="utf-8")
    # The in-place listing with the jump deleted by hand, then with the chain's declaration gone instead.
    without_jump = read_running(listing.replace(JUMP + "\n", ""), RAY.name)
    without_chain = read_running(listing.replace("-N SPARKINFER-RAY\n", ""), RAY.name)
    assert (without_jump.exists, without_jump.jumps) == (True, [])
    assert (without_chain.exists, without_chain.jumps) == (False, [JUMP])
    assert not absent(without_jump)
    assert not absent(without_chain)


def test_nothing_to_remove_is_an_empty_commit():
    assert restore_to_remove(running("iptables-S.absent.txt"), RAY.name) == "*filter\nCOMMIT\n"


def test_the_rules_file_is_what_iptables_restore_loaded_with_its_header_as_comments():
    text = RAY.rules_file("ipv4", ("Written by a test.",))
    assert text.splitlines() == [
        "# Written by a test.",
        "*filter",
        ":SPARKINFER-RAY - [0:0]",
        "-A SPARKINFER-RAY -i lo -j ACCEPT",
        "-A SPARKINFER-RAY -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        "-A SPARKINFER-RAY -s 192.168.176.11/32 -j ACCEPT",
        "-A SPARKINFER-RAY -s 192.168.176.12/32 -j ACCEPT",
        "-A SPARKINFER-RAY -j DROP",
        JUMP.replace("-A INPUT", "-I INPUT 1"),
        "COMMIT",
    ]


def test_a_one_word_comment_iptables_prints_unquoted_is_the_same_rule():
    one_word = Chain("SPARKINFER-RAY", ("6379",), ("192.168.176.11",), "ray")
    ray = running("iptables-S.one-word-comment.txt")
    assert ray.jumps == ["-A INPUT -p tcp -m multiport --dports 6379 -m comment --comment ray -j SPARKINFER-RAY"]
    assert one_word.jump().endswith('--comment "ray" -j SPARKINFER-RAY')
    assert in_place(ray, one_word, "ipv4")


def test_the_diff_shows_the_jumps_then_the_rules():
    assert shown(running("iptables-S.stale-source-and-jump.txt")) == (
        f"{STALE_JUMP}\n"
        f"{JUMP}\n"
        "-A SPARKINFER-RAY -i lo -j ACCEPT\n"
        "-A SPARKINFER-RAY -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
        "-A SPARKINFER-RAY -s 192.168.179.99/32 -j ACCEPT\n"
        "-A SPARKINFER-RAY -s 192.168.176.11/32 -j ACCEPT\n"
        "-A SPARKINFER-RAY -s 192.168.176.12/32 -j ACCEPT\n"
        "-A SPARKINFER-RAY -j DROP\n"
    )
    assert wanted_shown(RAY, "ipv4") == shown(running("iptables-S.in-place.txt"))
    assert shown(running("iptables-S.absent.txt")) == ""
