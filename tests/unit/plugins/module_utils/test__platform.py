"""The platform table: each row on the facts of the public report it cites (the figures are the reports' own)."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._platform import (
    BRANCHES,
    ROWS,
    Platform,
    PlatformError,
    branch,
    judge,
    platform_of,
    verdicts_message,
)

ACCEPTED = ("580",)
# NVIDIA/NV-Kernels#590: two GB10 Sparks on Linux 7.0.0-1019 (package 7.0.0-1019.19~24.04.2) with KHO on by default:
# "/proc/meminfo reports CmaTotal=0 and approximately 9.7 GiB in CmaFree"; the same systems "pass with Linux 6.17.13".
KHO_ON = {"kernel_release": "7.0.0-1019-nvidia", "kernel_cmdline": "", "memory_cma_total_kib": 0, "memory_cma_free_kib": 10171187}
# MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark#259 (hfeixas, kernel 7.0.0-1019-nvidia): "CmaTotal: 0 kB", "CmaFree: 940604 kB".
KHO_ON_SECOND_PAIR = {"kernel_release": "7.0.0-1019-nvidia", "memory_cma_total_kib": 0, "memory_cma_free_kib": 940604}
# NVIDIA/NV-Kernels#591: "Adding only kho=off produces zero CMA pageblocks, CmaTotal=0, CmaFree=0".
KHO_OFF = {"kernel_release": "7.0.0-1019-nvidia", "kernel_cmdline": "ro quiet splash kho=off", "memory_cma_total_kib": 0, "memory_cma_free_kib": 0}
# A Spark on 6.17.0-1014-nvidia (experiencenow-ai/ds4_on_spark docs/spark0-probe-2026-05-11.md): no KHO figures read.
SPARK_617 = {"kernel_release": "6.17.0-1014-nvidia"}


def rows(facts: dict, parts=("driver", "kernel", "image"), **known) -> list[tuple[str, str]]:
    return [(row["row"], row["verdict"]) for row in judge(platform_of(facts, **known), parts)]


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        # What DGX OS ships (NVIDIA/deepops): 580 with the open modules.
        ({"driver_version": "580.142", "kernel_module": "open"}, [("driver-580", "ok")]),
        # Start9Labs/start-technologies#3693: 580.173.02's proprietary modules never bring up the GPU.
        ({"driver_version": None, "kernel_module": "proprietary", "gpus": []}, [("driver-proprietary-no-gpu", "refuse")]),
        # The same PR: 580.159.03's proprietary modules did run; NVIDIA supports Blackwell with the open ones only.
        (
            {"driver_version": "580.159.03", "kernel_module": "proprietary", "gpus": [{"name": "NVIDIA GB10"}]},
            [("driver-proprietary-modules", "warn"), ("driver-580", "ok")],
        ),
        # The eugr README's 590 deadlock: refused unless accepted, then warned with the piecewise fix.
        ({"driver_version": "590.48.01"}, [("driver-branch-not-accepted", "refuse")]),
        # An unread flavour is no verdict: only the branch is judged.
        ({"driver_version": "580.126.09", "kernel_module": None}, [("driver-580", "ok")]),
    ],
)
def test_driver_rows_on_reported_drivers(facts, expected):
    assert rows(facts, ["driver"], accepted_branches=ACCEPTED) == expected


@pytest.mark.parametrize(
    ("driver", "expected"),
    [
        ("590.48.01", [("driver-590", "warn")]),
        # NV-Kernels#590 ran NCCL over RoCE on two Sparks with 595.84.
        ("595.84", [("driver-595", "ok")]),
        # MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks#47: "(580 vs 610)" on 2x DGX Spark.
        ("610.43.02", [("driver-610", "ok")]),
        # No public report covers 575 on a GB10.
        ("575.57.08", [("driver-branch-unsourced", "warn")]),
    ],
)
def test_an_accepted_branch_gets_its_reported_verdict(driver, expected):
    accepted = ("580", str(branch(driver)))
    assert rows({"driver_version": driver}, ["driver"], accepted_branches=accepted) == expected


def test_a_refused_branch_says_what_the_field_reports_of_it_and_the_fix():
    (row,) = judge(platform_of({"driver_version": "590.48.01"}, accepted_branches=ACCEPTED), ["driver"])
    assert row["what"] == (
        "NVIDIA driver 590.48.01: its branch is not in gb10_host_supported_driver_branches (580). The 590 branch: its full CUDA "
        "graphs deadlock or crash in capture on GB10 unified memory; piecewise CUDA graphs run"
    )
    assert row["fix"].startswith("install a 580.x driver (sudo apt install nvidia-driver-580-open")
    (unknown,) = judge(platform_of({"driver_version": "575.57.08"}, accepted_branches=ACCEPTED), ["driver"])
    assert unknown["what"].endswith("(580). No public report runs this branch on a GB10")


def test_the_590_warning_gives_piecewise_graphs_as_the_fix():
    (row,) = judge(platform_of({"driver_version": "590.48.01"}, accepted_branches=("580", "590")), ["driver"])
    assert row["fix"].endswith("""[--compilation-config, '{"cudagraph_mode": "piecewise"}']""")
    assert "013cd2ea2264d7af8567aa763ac6ccd8f0338c1a" in row["source"]


@pytest.mark.parametrize(
    ("facts", "fabric", "expected"),
    [
        (KHO_ON, True, [("kernel-kho-scratch", "refuse")]),
        (KHO_ON_SECOND_PAIR, True, [("kernel-kho-scratch", "refuse")]),
        # A Spark alone registers no memory with the ConnectX-7: warned, not refused.
        (KHO_ON, False, [("kernel-kho-scratch-alone", "warn")]),
        (KHO_OFF, True, [("kernel-ok", "ok")]),
        (SPARK_617, True, [("kernel-ok", "ok")]),
        # A kernel not read: no kernel row.
        ({}, True, []),
    ],
)
def test_kernel_rows_on_reported_kernels(facts, fabric, expected):
    assert rows(facts, ["kernel"], fabric=fabric) == expected


def test_the_kho_refusal_gives_the_figures_the_fix_and_its_sources():
    (row,) = judge(platform_of(KHO_ON_SECOND_PAIR), ["kernel"])
    assert row["what"] == (
        "kernel 7.0.0-1019-nvidia booted without kho=off, and /proc/meminfo shows CmaFree 0.9 GiB above CmaTotal 0.0 GiB: "
        "kexec handover's scratch area, which long-term pinning cannot use: NCCL's RoCE memory registration (ibv_reg_mr) fails "
        "with ENOMEM between Sparks"
    )
    assert row["fix"].startswith("add kho=off to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run sudo update-grub and reboot")
    assert "https://github.com/NVIDIA/NV-Kernels/pull/590" in row["source"]
    (fine,) = judge(platform_of(KHO_OFF), ["kernel"])
    assert fine["what"] == "kernel 7.0.0-1019-nvidia: no kexec-handover scratch area (booted with kho=off)"


@pytest.mark.parametrize(
    ("compat", "expected"),
    [
        # NGC vLLM 26.01 on a GB10: "Using CUDA 13.1 driver version 590.48.01 with kernel driver version 580.126.09".
        ("590.48.01", [("image-compat-driver-over-host", "warn")]),
        ("", [("image-compat-driver-not-over-host", "ok")]),
        # A compat driver of the host's own branch switches nothing on.
        ("580.82.07", [("image-compat-driver-not-over-host", "ok")]),
        # An image not probed for it: no image row.
        (None, []),
    ],
)
def test_image_rows_on_the_compat_driver_an_image_carries(compat, expected):
    assert rows({"driver_version": "580.126.09", "compat_driver_version": compat}, ["image"]) == expected


def test_the_compat_warning_names_both_drivers_and_the_entrypoint():
    (row,) = judge(platform_of({"driver_version": "580.126.09", "compat_driver_version": "590.48.01"}), ["image"])
    assert row["what"].startswith("the image carries CUDA's forward-compatibility driver 590.48.01 for the host's 580.126.09")
    assert "keep the image's entrypoint" in row["fix"]
    assert "gyliu513/langX101/pull/409" in row["source"]


def test_refusals_come_first_then_warnings_then_what_is_fine():
    facts = {"driver_version": "580.159.03", "kernel_module": "proprietary", "gpus": [{}], **KHO_ON}
    assert rows(facts, accepted_branches=ACCEPTED) == [
        ("kernel-kho-scratch", "refuse"),
        ("driver-proprietary-modules", "warn"),
        ("driver-580", "ok"),
    ]


def test_the_message_of_one_verdict_carries_each_fix_and_source():
    verdicts = judge(platform_of({"driver_version": "580.159.03", "kernel_module": "proprietary", "gpus": [{}]}, accepted_branches=ACCEPTED))
    message = verdicts_message(verdicts, "warn")
    assert message.startswith("NVIDIA driver 580.159.03 runs NVIDIA's proprietary kernel modules")
    assert ". Fix: install the open kernel modules before the next driver update: sudo apt install nvidia-driver-580-open" in message
    assert message.endswith(
        "(Source: https://github.com/Start9Labs/start-technologies/pull/3693 (580.173.02 proprietary: "
        '"RmInitAdapter failed! (0x62:0x1a:2631)"; open flavour works; NVIDIA\'s README: "Blackwell and later are only supported '
        'by the open kernel modules").)'
    )
    assert verdicts_message(verdicts, "refuse") == ""


def test_every_row_but_the_fine_image_one_cites_a_source_and_every_warning_or_refusal_a_fix():
    for row in ROWS:
        if row.name != "image-compat-driver-not-over-host":
            assert row.source, row.name
        assert bool(row.fix) == (row.verdict != "ok"), row.name
    assert set(BRANCHES) == {580, 590, 595, 610}


def test_what_the_table_cannot_judge_is_refused_by_name():
    with pytest.raises(PlatformError, match="no part 'firmware'"):
        judge(Platform(), ["firmware"])
    with pytest.raises(PlatformError, match="kernel_module is 'closed'"):
        judge(Platform(kernel_module="closed"))


@pytest.mark.parametrize(("version", "number"), [("580.142", 580), ("610.43.02", 610), ("", None), (None, None), ("rc.1", None)])
def test_branch(version, number):
    assert branch(version) == number
