"""The nccl-tests parser and its assessment, on real outputs (provenance in fixtures/nccl/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_tests import (
    SPARK_PAIR_MIN_BUSBW_GBPS,
    NcclTestsParseError,
    assess,
    human_size,
    parse_nccl_tests,
)

FIXTURES = Path(__file__).parent / "fixtures" / "nccl"
OUTPUTS = sorted(FIXTURES.glob("*.txt"))
GIB = 1 << 30


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")


def test_the_corpus_has_its_cases():
    names = {path.stem for path in OUTPUTS}
    assert len(names) >= 6
    assert {path.stem for path in FIXTURES.glob("*.expected.json")} == {f"{name}.expected" for name in names}
    sources = (FIXTURES / "SOURCES.md").read_text(encoding="utf-8")
    assert all(f"`{path.name}`" in sources for path in OUTPUTS)


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda path: path.stem)
def test_every_fixture_parses_to_its_sidecar(output):
    expected = json.loads(output.with_name(f"{output.stem}.expected.json").read_text(encoding="utf-8"))
    assert parse_nccl_tests(output.read_text(encoding="utf-8")).as_dict() == expected


# The headline facts of each source, read off the source by hand (not from the parser).
HEADLINES = {
    "2.18.5-all-gather-16g-gb10-pass": ("all_gather_perf", "2.18.5", 2, 16 * GIB, 22.98, 22.9611, None),
    "2.19.6-all-gather-512m-16g-gb10-both-twins": ("all_gather_perf", "2.19.6", 2, 16 * GIB, 24.20, 22.1205, None),
    "2.18.3-all-gather-1g-4g-gb10-switch": ("all_gather_perf", "2.18.3", 2, 4 * GIB, 22.46, 21.4033, None),
    "2.18.3-all-gather-1g-4g-gb10-direct-2.8gbps": ("all_gather_perf", "2.18.3", 2, 4 * GIB, 2.83, 2.82151, None),
    "2.18.3-all-gather-1g-gb10-debug-info-net-ib": ("all_gather_perf", "2.18.3", 2, GIB, 21.99, 21.9636, "NET/IB"),
    "2.x-legacy-all-reduce-4x-k80-error-column": (None, None, 4, 2 * GIB, 2.56, 2.54225, None),
    "2.x-legacy-all-reduce-3-node-t4-validation-off": (None, None, 3, 115343360, 0.50, 0.58536, None),
    "2.x-all-reduce-2-node-rtx4090-net-socket-excerpt": (None, None, 0, None, None, None, "NET/Socket"),
    "2.x-all-reduce-2-node-wrong-values-excerpt": (None, None, 0, 128, 0.00, None, None),
    "2.x-all-reduce-512m-8g-ring-cut-group-line": (None, None, 0, 8 * GIB, 95.10, 95.3009, None),
    # Rows pasted with no header: read in today's layout, the cut fourth row aside.
    "rccl-2.x-all-reduce-1g-8g-navi4x-rows-only-excerpt": (None, None, 0, 4 * GIB, 21.60, None, None),
    # A hand-made table (a node count in front of each row): no run's rows.
    "2.x-legacy-all-reduce-1g-p4dn-1-to-4-nodes-user-table": (None, None, 0, None, None, None, None),
}


@pytest.mark.parametrize(("name", "headline"), HEADLINES.items(), ids=list(HEADLINES))
def test_headline_facts_of_each_source(name, headline):
    test, version, ranks, largest, busbw, average, transport = headline
    result = parse_nccl_tests(fixture(name))
    assert (result.test, result.tests_version, result.ranks, result.largest_size_bytes) == (test, version, ranks, largest)
    assert result.busbw_at_largest_gbps == busbw
    assert result.avg_bus_bandwidth_gbps == average
    assert result.transport == transport


def test_the_debug_info_run_names_both_twins_and_the_nccl_build():
    result = parse_nccl_tests(fixture("2.18.3-all-gather-1g-gb10-debug-info-net-ib"))
    assert [hca["device"] for hca in result.ib_hcas] == ["rocep1s0f1", "roceP2p1s0f1"]
    assert {hca["link_layer"] for hca in result.ib_hcas} == {"RoCE"}
    assert result.oob_interfaces == [{"interface": "enp1s0f1np1", "address": "192.168.100.16"}, {"interface": "enp1s0f1np1", "address": "192.168.100.15"}]
    assert (result.nccl_version, result.nccl_library_version, result.networks) == ("2.28.9+cuda13.0", "2.28.9", ["IB"])
    assert result.channel_transports == ["NET/IB"]
    assert result.socket_fallback is False
    # The one result row sits between NCCL INFO lines and is still read.
    (row,) = result.rows
    assert (row.size_bytes, row.out_of_place.busbw_gbps, row.in_place.busbw_gbps) == (GIB, 21.99, 21.94)
    assert assess(result) == []


def test_gb10_devices_and_hosts():
    result = parse_nccl_tests(fixture("2.19.6-all-gather-512m-16g-gb10-both-twins"))
    assert result.hosts == ["spark-101", "spark-102"]
    assert [(device.rank, device.bus_id, device.name) for device in result.devices] == [(0, "000f:01:00", "NVIDIA GB10"), (1, "000f:01:00", "NVIDIA GB10")]
    assert [row.size_bytes for row in result.rows] == [GIB // 2 << n for n in range(6)]
    assert (result.out_of_bounds, result.out_of_bounds_ok, result.wrong_total, result.concluded) == (0, True, 0, True)


def test_the_legacy_layout_reads_redop_and_error_columns():
    result = parse_nccl_tests(fixture("2.x-legacy-all-reduce-4x-k80-error-column"))
    assert result.columns[:5] == ["size", "count", "type", "redop", "time"]
    first = result.rows[0]
    assert (first.redop, first.root, first.out_of_place.error, first.out_of_place.wrong) == ("sum", None, 2e-07, None)
    assert (result.wrong_total, result.max_error) == (None, 2e-07)
    assert result.parameters == {
        "nthread": 1,
        "ngpus": 1,
        "min_bytes": 33554432,
        "max_bytes": 8589934592,
        "warmup_iters": 5,
        "iters": 20,
        "validation": 1,
        "step": "2(factor)",
    }


def test_not_available_cells_are_null():
    result = parse_nccl_tests(fixture("2.x-legacy-all-reduce-3-node-t4-validation-off"))
    assert {row.out_of_place.error for row in result.rows} | {row.in_place.error for row in result.rows} == {None}
    assert result.max_busbw_gbps == 0.74
    assert result.parameters["step"] == "1048576(bytes)"


def test_socket_channels_are_the_tcp_fallback_and_a_cut_row_is_kept_aside():
    result = parse_nccl_tests(fixture("2.x-all-reduce-2-node-rtx4090-net-socket-excerpt"))
    assert (result.transport, result.socket_fallback, result.channel_transports) == ("NET/Socket", True, ["NET/Socket"])
    assert result.rows == []
    assert result.unparsed_rows == ["128            32     float     sum"]


def test_wrong_values_are_summed():
    result = parse_nccl_tests(fixture("2.x-all-reduce-2-node-wrong-values-excerpt"))
    assert [(row.out_of_place.wrong, row.in_place.wrong) for row in result.rows] == [(4, 4), (8, 6), (16, 12), (30, 24), (54, 52)]
    assert result.wrong_total == 210


def test_mpirun_tagged_output_parses_like_plain_output():
    plain = fixture("2.19.6-all-gather-512m-16g-gb10-both-twins")
    tagged = "".join(f"[1,0]<stdout>:{line}" for line in plain.splitlines(keepends=True))
    assert parse_nccl_tests(tagged).as_dict() == parse_nccl_tests(plain).as_dict()


def test_the_version_line_of_newer_nccl_tests_with_its_commit():
    # The first line of the all_reduce_perf run in NVIDIA/dgx-spark-playbooks PR#103.
    result = parse_nccl_tests("# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102\n")
    assert (result.tests_version, result.nccl_library_version) == ("2.20.0", "2.31.2")
    assert parse_nccl_tests("# nccl-tests version 2.17.1\n").nccl_library_version is None


def test_lines_that_lost_their_hash_are_still_read():
    # From NVIDIA/nccl-tests#249, where the output came without its leading '#'.
    text = (
        " nThread 1 nGpus 1 minBytes 8 maxBytes 16777216 step: 2(factor) warmup iters: 5 iters: 5 agg iters: 1 validation: 1 graph: 0\n"
        "  Rank  0 Group  0 Pid    127 on nccl-846b9d30a6bb6b529fb3c170f4809fea-1725464730-worker-0 device  0 [0x00] NVIDIA A10G\n"
    )
    result = parse_nccl_tests(text)
    assert (result.parameters["max_bytes"], result.parameters["iters"], result.ranks) == (16777216, 5, 1)
    assert result.devices[0].name == "NVIDIA A10G"


def test_a_non_finite_cell_is_null():
    text = fixture("2.18.5-all-gather-16g-gb10-pass")
    assert parse_nccl_tests(text.replace("45.88   22.94", "45.88     inf")).rows[0].out_of_place.busbw_gbps is None


def test_a_table_header_must_start_with_size():
    # nccl-tests always prints size first; rows are only read under such a header.
    result = parse_nccl_tests("# count size busbw\n 2 N/A 2.0\n")
    assert (result.columns, result.rows, result.unparsed_rows) == ([], [], ["2 N/A 2.0"])


def test_empty_output_has_no_facts_and_no_error():
    result = parse_nccl_tests("")
    assert (result.rows, result.transport, result.ranks, result.avg_bus_bandwidth_gbps) == ([], None, 0, None)
    assert result.busbw_at_largest_gbps is None


# Single lines quoted from public threads (NVIDIA/nccl#398, NVIDIA/nccl-tests#82, ROCm/rccl#1026 and
# #526 logs, the stored Japanese notes), appended to real tables to exercise one rule each.
NCCL_2_4_NO_IB = (
    "ip-172-31-0-112:7846:7846 [0] NCCL INFO NET/IB : No device found.\nip-172-31-0-112:7846:7846 [0] NCCL INFO NET/Socket : Using [0]ens5:172.31.0.112<0>\n"
)
IBVERBS_WARN = "v100-gpu-1:14926:14926 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
SSH_TIMEOUT = "ssh: connect to host 192.168.100.16 port 22: Connection timed out\n"


def test_old_nccl_without_channel_lines_is_read_from_its_socket_line():
    result = parse_nccl_tests(NCCL_2_4_NO_IB + fixture("2.18.5-all-gather-16g-gb10-pass"))
    assert (result.transport, result.ib_no_device) == ("NET/Socket", True)
    assert result.socket_interfaces == [{"interface": "ens5", "address": "172.31.0.112"}]


def test_socket_network_with_intra_node_channels_only_is_no_inter_node_transport():
    lines = "3767c65d25c4:880:887 [0] NCCL INFO Using network Socket\ntesla-105:1480:2169 [2] NCCL INFO Channel 00 : 2[af000] -> 3[b1000] via P2P/IPC\n"
    result = parse_nccl_tests(lines + fixture("2.18.5-all-gather-16g-gb10-pass"))
    assert (result.networks, result.channel_transports, result.transport, result.socket_fallback) == (["Socket"], ["P2P"], None, False)


def test_the_network_line_alone_names_the_transport():
    result = parse_nccl_tests("spark-4440:24302:24302 [0] NCCL INFO Using network IB\n")
    assert result.transport == "NET/IB"
    ib_only = parse_nccl_tests(
        "spark-fb97:23491:23491 [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE [RO]; OOB enp1s0f1np1:192.168.100.15<0>\n"
    )
    assert ib_only.transport == "NET/IB"


def test_warnings_and_error_lines_are_kept_once():
    result = parse_nccl_tests(IBVERBS_WARN + IBVERBS_WARN + SSH_TIMEOUT + fixture("2.18.5-all-gather-16g-gb10-pass"))
    assert result.nccl_warnings == [IBVERBS_WARN.strip()]
    assert result.error_lines == [SSH_TIMEOUT.strip()]


def test_a_header_without_busbw_is_refused():
    with pytest.raises(NcclTestsParseError, match="has no size or busbw column"):
        parse_nccl_tests("#       size         count      type   redop    root     time   algbw\n")


def test_a_header_with_one_half_is_refused():
    with pytest.raises(NcclTestsParseError, match="lacks the in-place half"):
        parse_nccl_tests("#       size         count      type   redop    root     time   algbw   busbw  #wrong\n")


def test_a_header_whose_measures_repeat_without_time_starts_a_second_half():
    result = parse_nccl_tests("# size busbw busbw\n 1024 1.5 2.5\n")
    (row,) = result.rows
    assert (row.out_of_place.busbw_gbps, row.in_place.busbw_gbps, row.busbw_gbps()) == (1.5, 2.5, 2.5)


def test_a_row_with_a_word_where_a_number_belongs_is_refused():
    text = fixture("2.18.5-all-gather-16g-gb10-pass").replace("45.88   22.94", "45.88   fast!")
    with pytest.raises(NcclTestsParseError, match=r"busbw_gbps 'fast!' is not a number"):
        parse_nccl_tests(text)


def test_two_tables_in_one_output_are_refused():
    text = fixture("2.18.5-all-gather-16g-gb10-pass")
    with pytest.raises(NcclTestsParseError, match="more than one result table"):
        parse_nccl_tests(text + text)


def test_an_unreadable_average_is_refused_and_nan_is_null():
    text = fixture("2.18.5-all-gather-16g-gb10-pass")
    with pytest.raises(NcclTestsParseError, match="Avg bus bandwidth"):
        parse_nccl_tests(text.replace(": 22.9611", ": fast"))
    assert parse_nccl_tests(text.replace(": 22.9611", ": nan")).avg_bus_bandwidth_gbps is None


def test_a_failed_out_of_bounds_check():
    text = fixture("2.18.5-all-gather-16g-gb10-pass").replace("values : 0 OK", "values : 3 FAILED")
    result = parse_nccl_tests(text)
    assert (result.out_of_bounds, result.out_of_bounds_ok) == (3, False)
    assert assess(result)[0].startswith("nccl-tests counted 3 out-of-bounds value(s): the collective returned wrong data.")


@pytest.mark.parametrize(
    ("size", "text"),
    [(16 * GIB, "16 GiB"), (512 << 20, "512 MiB"), (8192, "8 KiB"), (115343360, "110 MiB"), (1000, "1000 bytes")],
)
def test_human_size(size, text):
    assert human_size(size) == text


def test_passing_runs_have_no_problems():
    for name in ("2.18.5-all-gather-16g-gb10-pass", "2.19.6-all-gather-512m-16g-gb10-both-twins", "2.18.3-all-gather-1g-4g-gb10-switch"):
        assert assess(parse_nccl_tests(fixture(name))) == [], name


def test_three_gbps_points_at_the_hca_or_the_nccl_build():
    (problem,) = assess(parse_nccl_tests(fixture("2.18.3-all-gather-1g-4g-gb10-direct-2.8gbps")))
    assert problem.startswith(
        "bus bandwidth 2.83 GB/s at 4 GiB is below 21.875 GB/s (the floor for two Sparks over one 200 GbE cable: 175 Gb/s, "
        "NVIDIA spark_cluster_setup.py MIN_NCCL_TEST_BW). About 3 GB/s on a Spark pair means the wrong HCA or an NCCL build"
    )
    for cause in ("MTU 1500", "only one twin in NCCL_IB_HCA", "dgx-spark-playbooks#25", "dgx-spark-playbooks#102", "PR#103"):
        assert cause in problem
    # Run without NCCL_DEBUG: the reader is told how to see the transport.
    assert "The output does not say which transport NCCL used: rerun with -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET" in problem


def test_under_the_floor_with_the_transport_named_asks_for_no_rerun():
    (problem,) = assess(parse_nccl_tests(fixture("2.18.3-all-gather-1g-gb10-debug-info-net-ib")), min_busbw_gbps=23)
    assert problem.startswith("bus bandwidth 21.99 GB/s at 1 GiB is below 23 GB/s. Just under the floor: most likely MTU 1500 on one end of the link. Typical")


@pytest.mark.parametrize(
    ("floor", "lead"),
    [(40.0, "About half the link: most likely only one twin"), (23.0, "Just under the floor: most likely MTU 1500")],
)
def test_the_likely_cause_follows_how_far_under_the_floor(floor, lead):
    (problem,) = assess(parse_nccl_tests(fixture("2.18.5-all-gather-16g-gb10-pass")), min_busbw_gbps=floor)
    assert problem.startswith(f"bus bandwidth 22.98 GB/s at 16 GiB is below {floor:g} GB/s. {lead}")
    assert "The largest buffer" not in problem


def test_a_small_largest_buffer_is_named():
    (problem,) = assess(parse_nccl_tests(fixture("2.x-legacy-all-reduce-3-node-t4-validation-off")))
    assert problem.endswith("The largest buffer was only 110 MiB: the floor is defined for all_gather_perf -b 16G -e 16G -f 2.")


def test_a_zero_floor_reports_without_gating():
    assert assess(parse_nccl_tests(fixture("2.18.3-all-gather-1g-4g-gb10-direct-2.8gbps")), min_busbw_gbps=0) == []


def test_socket_fallback_fails_unless_allowed():
    result = parse_nccl_tests(NCCL_2_4_NO_IB + fixture("2.18.5-all-gather-16g-gb10-pass"))
    (problem,) = assess(result)
    assert problem.startswith("NCCL moved the data over TCP sockets (NET/Socket on ens5) instead of RoCE")
    assert "NET/IB : No device found): in a container pass --device /dev/infiniband" in problem
    assert assess(result, allow_socket_transport=True) == []


def test_no_rows_after_a_clean_exit_is_a_problem():
    problems = assess(parse_nccl_tests(fixture("2.x-all-reduce-2-node-rtx4090-net-socket-excerpt")))
    assert problems[0].startswith("NCCL moved the data over TCP sockets (NET/Socket) instead of RoCE")
    assert "NET/IB : No device found" not in problems[0]
    assert problems[1] == (
        "the nccl-tests command printed no result rows: this is not the output of a complete nccl-tests run "
        "(it stops at '128            32     float     sum')."
    )


def test_wrong_values_are_a_problem():
    problems = assess(parse_nccl_tests(fixture("2.x-all-reduce-2-node-wrong-values-excerpt")), min_busbw_gbps=0)
    assert problems == [
        "the result table counts 210 wrong value(s) (#wrong): the collective returned wrong data. Suspect the NCCL build or different NCCL "
        "libraries on the nodes, then the link (RoCE errors in /sys/class/infiniband/<hca>/ports/1/counters)."
    ]


def test_a_timeout_names_the_usual_hangs_and_how_far_it_got():
    result = parse_nccl_tests(IBVERBS_WARN + fixture("2.18.3-all-gather-1g-4g-gb10-switch"))
    (problem,) = assess(result, timed_out=True, timeout_s=300, rc=124)
    assert problem.startswith("all_gather_perf did not finish within 300 s and was killed. A run that hangs is most often a hung NCCL init")
    for cause in ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA names an HCA that is down or not cabled", "firewall", "NCCL_DEBUG=INFO"):
        assert cause in problem
    assert problem.endswith(f"It printed 3 result row(s) before it was killed. Last NCCL warning: {IBVERBS_WARN.strip()}")


def test_a_failed_command_quotes_its_error_and_sigkill_hints_at_memory():
    result = parse_nccl_tests(SSH_TIMEOUT)
    (problem,) = assess(result, rc=1)
    assert problem == f"the nccl-tests command exited with rc=1: {SSH_TIMEOUT.strip()}."
    (killed,) = assess(result, rc=137)
    assert "killed by SIGKILL: on a Spark's unified memory a 16 GiB buffer" in killed


def test_the_default_floor_is_nvidias_spark_pair_threshold():
    assert SPARK_PAIR_MIN_BUSBW_GBPS == 175 / 8
