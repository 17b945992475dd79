"""gb10_facts end to end in-process, fed real GB10 outputs (fixtures/gb10/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import GPU_QUERY_FIELDS
from ansible_collections.sparkinfer.cluster.plugins.modules import gb10_facts

from .module_harness import FakeCommands, ModuleFail, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "gb10"
SMI = "/usr/bin/nvidia-smi"
QUERY = (SMI, f"--query-gpu={','.join(GPU_QUERY_FIELDS)}", "--format=csv")
MEMINFO = str(FIXTURES / "meminfo-debian12-x86_64-lab-host.txt")


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def real_gb10() -> FakeCommands:
    return FakeCommands(
        {
            QUERY: (0, fixture("query-index-name-memory-csv.txt"), ""),
            (SMI,): (0, fixture("nvidia-smi-580.173.02-plain.txt"), ""),
        }
    )


@pytest.mark.parametrize("check_mode", [False, True])
def test_facts_of_a_gb10(check_mode):
    commands = real_gb10()
    result = run_module(gb10_facts.main, {"meminfo_path": MEMINFO, "_ansible_check_mode": check_mode}, commands)
    facts = result["ansible_facts"]["sparkinfer_gb10"]
    assert result["changed"] is False
    assert [gpu["name"] for gpu in facts["gpus"]] == ["NVIDIA GB10"]
    assert facts["gpus"][0]["compute_cap"] is None  # that real query did not ask for it
    assert (facts["driver_version"], facts["driver_branch"], facts["cuda_version"]) == ("580.173.02", "580", "13.0")
    assert facts["unified_memory"] is True
    assert facts["memory_total_kib"] == 24683584
    assert facts["nvidia_smi_error"] is None
    assert commands.calls == [QUERY, (SMI,)]


def test_missing_nvidia_smi_is_reported_not_raised():
    result = run_module(gb10_facts.main, {"meminfo_path": MEMINFO}, FakeCommands({}), bin_paths={"nvidia-smi": None})
    facts = result["ansible_facts"]["sparkinfer_gb10"]
    assert facts["gpus"] == []
    assert facts["unified_memory"] is False
    assert facts["nvidia_smi_error"] == "nvidia-smi not found: the NVIDIA driver is not installed"


def test_failing_query_is_reported_with_its_output():
    commands = FakeCommands({QUERY: (9, "", "NVIDIA-SMI has failed because it couldn't communicate with the driver")})
    facts = run_module(gb10_facts.main, {"meminfo_path": MEMINFO}, commands)["ansible_facts"]["sparkinfer_gb10"]
    assert facts["gpus"] == []
    assert facts["nvidia_smi_error"].endswith("rc=9: NVIDIA-SMI has failed because it couldn't communicate with the driver")


def test_failing_banner_is_reported():
    commands = real_gb10()
    commands.answers[(SMI,)] = (6, "No devices were found", "")
    facts = run_module(gb10_facts.main, {"meminfo_path": MEMINFO}, commands)["ansible_facts"]["sparkinfer_gb10"]
    assert facts["nvidia_smi_error"] == f"{SMI} failed with rc=6: No devices were found"


def test_unparsable_output_fails_with_the_reason():
    commands = real_gb10()
    commands.answers[(SMI,)] = (0, fixture("query-name-driver-csv.txt"), "")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, {"meminfo_path": MEMINFO}, commands)
    assert "cannot parse the host's GPU or memory facts: nvidia-smi output has no" in failure.value.result["msg"]


def test_unreadable_meminfo_fails_naming_the_file(tmp_path):
    missing = str(tmp_path / "meminfo")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, {"meminfo_path": missing}, real_gb10())
    assert failure.value.result["msg"].startswith(f"cannot read {missing}:")
