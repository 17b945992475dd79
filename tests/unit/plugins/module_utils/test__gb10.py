"""The GB10 host-fact parsers, on real outputs (provenance in fixtures/gb10/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import (
    Gb10ParseError,
    driver_branch,
    parse_gpu_query_csv,
    parse_meminfo,
    parse_smi_banner,
)

FIXTURES = Path(__file__).parent / "fixtures" / "gb10"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_meminfo_of_a_real_host():
    values = parse_meminfo(fixture("meminfo-debian12-x86_64-lab-host.txt"))
    assert values["MemTotal"] == 24683584
    assert 0 < values["MemAvailable"] <= values["MemTotal"]
    assert "HugePages_Total" in values


def test_meminfo_without_memavailable_is_refused():
    text = "\n".join(line for line in fixture("meminfo-debian12-x86_64-lab-host.txt").splitlines() if "MemAvailable" not in line)
    with pytest.raises(Gb10ParseError, match="MemAvailable"):
        parse_meminfo(text)


def test_empty_query_output_means_no_gpu():
    assert parse_gpu_query_csv("") == []


def test_query_header_without_name_is_refused():
    with pytest.raises(Gb10ParseError, match="lacks name"):
        parse_gpu_query_csv("index, uuid\n0, GPU-1\n")


def test_query_row_with_missing_fields_is_refused():
    with pytest.raises(Gb10ParseError, match="has 2 fields, the header has 3"):
        parse_gpu_query_csv("index, name, compute_cap\n0, NVIDIA GB10\n")


def test_query_row_without_numeric_index_is_refused():
    with pytest.raises(Gb10ParseError, match="no numeric GPU index"):
        parse_gpu_query_csv("index, name\nzero, NVIDIA GB10\n")


def test_banner_missing_is_refused():
    with pytest.raises(Gb10ParseError, match="banner"):
        parse_smi_banner("No devices were found\n")


@pytest.mark.parametrize(("version", "branch"), [("580.95.05", "580"), ("590.44.01", "590"), (None, None), ("", None)])
def test_driver_branch(version, branch):
    assert driver_branch(version) == branch
