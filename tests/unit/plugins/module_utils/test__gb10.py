"""The GB10 host-fact parsers, on real outputs (provenance in fixtures/gb10/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import (
    Gb10ParseError,
    disk_space,
    driver_branch,
    nearest_existing_path,
    parse_gpu_query,
    parse_meminfo,
    parse_nvrm_version,
    parse_smi_banner,
    process_start_time,
)

FIXTURES = Path(__file__).parent / "fixtures" / "gb10"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "driver"),
    [("nvidia-smi-580.173.02-plain.txt", "580.173.02"), ("nvidia-smi-580.95.05-plain-desktop.txt", "580.95.05")],
)
def test_banner_of_real_gb10_tables(name, driver):
    banner = parse_smi_banner(fixture(name))
    assert banner.as_dict() == {"nvidia_smi_version": driver, "driver_version": driver, "cuda_version": "13.0"}


def test_banner_missing_is_refused():
    table_without_banner = "\n".join(line for line in fixture("nvidia-smi-580.173.02-plain.txt").splitlines() if "NVIDIA-SMI" not in line)
    with pytest.raises(Gb10ParseError, match="banner"):
        parse_smi_banner(table_without_banner)


def test_the_query_of_a_real_gb10():
    (gpu,) = parse_gpu_query(fixture("query-gb10-facts-fields-noheader-nounits-580.142.txt"))
    assert gpu.as_dict() == {
        "index": 0,
        "name": "NVIDIA GB10",
        "pci_bus_id": "0000000F:01:00.0",
        "driver_version": "580.142",
        "compute_cap": "12.1",
        "temperature_c": 52,
        "pstate": "P0",
        # Unified memory: the GPU has no memory of its own to report.
        "memory_total_mib": None,
    }


def test_empty_query_output_means_no_gpu():
    assert parse_gpu_query("") == []


def test_meminfo_of_a_real_host():
    values = parse_meminfo(fixture("meminfo-debian12-x86_64-lab-host.txt"))
    assert (values["MemTotal"], values["MemFree"], values["MemAvailable"], values["Cached"]) == (24683584, 23015436, 24113780, 1068752)
    assert 0 < values["MemAvailable"] <= values["MemTotal"]
    assert "HugePages_Total" in values


@pytest.mark.parametrize("field", ["MemTotal", "MemFree", "MemAvailable", "Cached"])
def test_meminfo_without_a_figure_the_plan_reads_is_refused(field):
    lines = fixture("meminfo-debian12-x86_64-lab-host.txt").splitlines()
    with pytest.raises(Gb10ParseError, match=f"/proc/meminfo has no {field} line"):
        parse_meminfo("\n".join(line for line in lines if not line.startswith(f"{field}:")))


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("nvrm-version-580.142-open-aarch64-gb10.txt", ("open", "580.142")),
        ("nvrm-version-565.57.01-open-x86_64.txt", ("open", "565.57.01")),
        ("nvrm-version-384.98-proprietary-x86_64.txt", ("proprietary", "384.98")),
    ],
)
def test_which_kernel_modules_are_loaded(name, read):
    assert parse_nvrm_version(fixture(name)) == read


def test_a_version_file_without_its_nvrm_line_is_refused():
    gcc_line_only = fixture("nvrm-version-580.142-open-aarch64-gb10.txt").splitlines()[1]
    with pytest.raises(Gb10ParseError, match="no 'NVRM version"):
        parse_nvrm_version(gcc_line_only)


@pytest.mark.parametrize(("version", "branch"), [("580.95.05", "580"), ("590.44.01", "590"), (None, None), ("", None)])
def test_driver_branch(version, branch):
    assert driver_branch(version) == branch


@pytest.mark.parametrize(
    ("path", "existing", "checked"),
    [
        ("/opt/sparkinfer/models", {"/opt/sparkinfer/models", "/opt/sparkinfer", "/opt"}, "/opt/sparkinfer/models"),
        ("/opt/sparkinfer/models", {"/opt"}, "/opt"),
        ("/opt/sparkinfer/models/", {"/opt/sparkinfer"}, "/opt/sparkinfer"),
        ("/srv/a/../models", {"/srv"}, "/srv"),
        ("/nothing/here", set(), "/"),
        ("/", set(), "/"),
    ],
)
def test_nearest_existing_path(path, existing, checked):
    assert nearest_existing_path(path, existing.__contains__) == checked


def test_nearest_existing_path_on_the_real_filesystem(tmp_path):
    assert nearest_existing_path(str(tmp_path / "models" / "qwen"), lambda candidate: Path(candidate).exists()) == str(tmp_path)


def test_relative_path_is_refused():
    with pytest.raises(Gb10ParseError, match="not absolute"):
        nearest_existing_path("models", lambda _candidate: True)


def test_disk_space_counts_what_unprivileged_users_may_use():
    # f_frsize 4096, f_blocks 1000, f_bavail 250 (f_bfree, with root's reserve, is not used).
    assert disk_space(4096, 1000, 250) == (1024000, 4096000)


# Malformed input below is synthetic, written here to exercise the parser's refusals; it is no captured output.


ROW = "query-gb10-facts-fields-noheader-nounits-580.142.txt"


@pytest.mark.parametrize("figure", ["inf", "-inf", "1e400", "nan", "unknown"])
def test_query_row_with_a_memory_figure_that_is_no_number_is_refused(figure):
    text = fixture(ROW).replace("[N/A]", figure)
    with pytest.raises(Gb10ParseError, match=r"memory.total \(MiB\) .* is not a number"):
        parse_gpu_query(text)


def test_query_row_cut_short_is_refused():
    row = fixture(ROW).strip()
    with pytest.raises(Gb10ParseError, match="has 7 fields, the query asks for 8"):
        parse_gpu_query(row.rsplit(",", 1)[0])


@pytest.mark.parametrize("index", ["GPU0", "\u0660", "-1"])
def test_query_row_without_a_numeric_index_is_refused(index):
    with pytest.raises(Gb10ParseError, match="has no numeric GPU index"):
        parse_gpu_query(fixture(ROW).replace("0, NVIDIA", f"{index}, NVIDIA"))


def test_query_row_with_a_temperature_that_is_no_number_is_refused():
    with pytest.raises(Gb10ParseError, match="GPU temperature 'hot' is not a number"):
        parse_gpu_query(fixture(ROW).replace(", 52,", ", hot,"))


def test_meminfo_figures_in_other_scripts_digits_are_not_read():
    # Arabic-Indic digits match \d in a Unicode regex, and int() reads them: MemTotal would be 123 KiB.
    lines = [line for line in fixture("meminfo-debian12-x86_64-lab-host.txt").splitlines() if not line.startswith("MemTotal")]
    with pytest.raises(Gb10ParseError, match="no MemTotal line"):
        parse_meminfo("\n".join(["MemTotal:       \u0661\u0662\u0663 kB", *lines]))


def test_meminfo_lines_that_are_not_ascii_are_skipped():
    text = fixture("meminfo-debian12-x86_64-lab-host.txt") + "Gr\u00f6\u00dfe:  12 kB\n"
    assert parse_meminfo(text)["MemTotal"] == 24683584


@pytest.mark.parametrize(
    ("proc_stat", "pid_stat", "started"),
    [
        # A lab node's init, systemd, started 572.26 s after the lab machine's kernel: 08:20:48.26 UTC, when Docker started
        # the node's container (its StartedAt: 2026-12-07T08:20:48.918461961Z).
        ("proc-stat-lab-node-debian12.txt", "pid1-stat-systemd-lab-node-debian12.txt", 1796631076 + 572.26),
        # The lab machine's own init started 0.25 s after its kernel.
        ("proc-stat-lab-host-debian12.txt", "pid1-stat-lab-host.txt", 1796631076.25),
    ],
)
def test_when_init_started(proc_stat, pid_stat, started):
    assert process_start_time(fixture(proc_stat), fixture(pid_stat), 100) == pytest.approx(started)


def test_a_stat_file_without_btime_or_a_start_time_is_refused():
    with pytest.raises(Gb10ParseError, match="no 'btime SECONDS' line"):
        process_start_time(fixture("meminfo-debian12-x86_64-lab-host.txt"), fixture("pid1-stat-lab-host.txt"), 100)
    cut = fixture("pid1-stat-lab-host.txt").split()[:20]
    with pytest.raises(Gb10ParseError, match="no start time"):
        process_start_time(fixture("proc-stat-lab-host-debian12.txt"), " ".join(cut), 100)
