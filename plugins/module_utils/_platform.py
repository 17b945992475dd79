# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Which NVIDIA driver, kernel modules, Linux kernel and image CUDA compat driver a DGX Spark serves on: one table.

Each row says when it applies, its verdict (refuse, warn or ok), what it found in words, the fix and the public source
that reported it. gb10_host's preflight judges the driver and kernel rows, vllm_image's gate (vllm_image_info) the image
rows, and the doctor all of them: every caller reads the same rows. No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import driver_branch

VERDICTS = ("refuse", "warn", "ok")
# A verdict as the severity of a finding (the host rule table's, the doctor's).
SEVERITY_OF_VERDICT = {"refuse": "error", "warn": "warning", "ok": "ok"}
PARTS = ("driver", "kernel", "image")
# What /proc/driver/nvidia/version's first line says of the loaded kernel modules: NVIDIA's open ones, or the closed ones.
KERNEL_MODULES = ("open", "proprietary")


class PlatformError(ValueError):
    """Facts the table cannot judge (named in the message)."""


@dataclass(frozen=True)
class Platform:
    """What is known of one node, and of the image it serves; None where it was not read."""

    # The kernel driver, as nvidia-smi's banner prints it (580.95.05).
    driver_version: str | None = None
    # Whether nvidia-smi lists a GPU.
    gpu_visible: bool = True
    # "open" or "proprietary", from /proc/driver/nvidia/version.
    kernel_module: str | None = None
    # uname -r (6.17.0-1014-nvidia).
    kernel_release: str | None = None
    # The boot options, as /proc/cmdline holds them.
    kernel_cmdline: str | None = None
    # CmaTotal and CmaFree of /proc/meminfo (KiB).
    memory_cma_total_kib: int | None = None
    memory_cma_free_kib: int | None = None
    # The libcuda an image carries for CUDA forward compatibility (590.48.01), '' when it carries none.
    compat_driver_version: str | None = None
    # gb10_host_supported_driver_branches: a branch outside it is refused whatever the table says.
    accepted_branches: tuple[str, ...] = ()
    # Whether NCCL crosses the ConnectX-7 (a cluster of more than one node).
    fabric: bool = True


def branch(version: str | None) -> int | None:
    """A driver's branch as a number, to compare: 580.95.05 -> 580; None when not a version."""
    head = driver_branch(version)
    return int(head) if head and head.isascii() and head.isdigit() else None


def boot_options(cmdline: str | None) -> set[str]:
    """The words of a kernel command line: kho=off, quiet, ..."""
    return set((cmdline or "").split())


@dataclass(frozen=True)
class Row:
    name: str
    title: str
    part: str
    verdict: str
    applies: Callable[[Platform], bool]
    says: Callable[[Platform], str]
    fix: str
    source: str


_OPEN_DRIVER = "sudo apt install nvidia-driver-580-open (the driver DGX OS ships), then reboot"
_DEEPOPS = "NVIDIA/deepops roles/nvidia-dgx/vars/ubuntu-24.04.yml @ 03e19e9582852da024edc88e8345baec79377155 (DGX Spark: nvidia-driver-580-open)"
_START9 = (
    'https://github.com/Start9Labs/start-technologies/pull/3693 (580.173.02 proprietary: "RmInitAdapter failed! (0x62:0x1a:2631)"; '
    'open flavour works; NVIDIA\'s README: "Blackwell and later are only supported by the open kernel modules")'
)
_KHO = (
    "https://github.com/NVIDIA/NV-Kernels/pull/590 and /pull/591 (KHO scratch pageblocks on 7.0.0-1019 fail long-term pinning, "
    "ibv_reg_mr ENOMEM; kho=off passes); https://github.com/MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/issues/259 "
    '("CmaFree > CmaTotal is the whole giveaway")'
)
_KHO_FIX = (
    "add kho=off to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run sudo update-grub and reboot (the reports checked that "
    "/sys/kernel/kexec_crash_size reads 0, no kdump reservation, first), or boot the 6.17 kernel DGX OS had before"
)


def _driver(platform: Platform) -> str:
    return f"NVIDIA driver {platform.driver_version}"


def _accepted(platform: Platform) -> bool:
    return str(branch(platform.driver_version)) in platform.accepted_branches


def _gib(kib: int | None) -> str:
    return f"{(kib or 0) / 1048576:.1f} GiB"


def _kho_scratch(platform: Platform) -> bool:
    """Kexec handover's scratch area holds memory: CMA pageblocks beyond any CMA area (CmaFree above CmaTotal), and the
    kernel booted without kho=off."""
    total, free = platform.memory_cma_total_kib, platform.memory_cma_free_kib
    return total is not None and free is not None and free > total and "kho=off" not in boot_options(platform.kernel_cmdline)


def _kho_evidence(platform: Platform) -> str:
    return (
        f"kernel {platform.kernel_release} booted without kho=off, and /proc/meminfo shows CmaFree "
        f"{_gib(platform.memory_cma_free_kib)} above CmaTotal {_gib(platform.memory_cma_total_kib)}: kexec handover's scratch area"
    )


def _compat_over_host(platform: Platform) -> bool:
    compat, host = branch(platform.compat_driver_version), branch(platform.driver_version)
    return compat is not None and host is not None and compat > host


# What the field reports of each driver branch on a GB10: (verdict, what it does, fix, source).
BRANCHES: dict[int, tuple[str, str, str, str]] = {
    580: ("ok", "the branch DGX OS ships for the Spark", "", _DEEPOPS),
    590: (
        "warn",
        "its full CUDA graphs deadlock or crash in capture on GB10 unified memory; piecewise CUDA graphs run",
        'install a 580.x driver (nvidia-driver-580-open); on 590 serve with vllm_serve_extra_args: [--compilation-config, \'{"cudagraph_mode": "piecewise"}\']',
        'eugr/spark-vllm-docker README.md @ 013cd2ea2264d7af8567aa763ac6ccd8f0338c1a (2026-03-12: "Driver 590.x has a CUDAGraph capture '
        'deadlock on GB10 unified memory"); recipes/4x-spark-cluster/qwen3.5-397b-int4-autoround.yaml @ '
        '8134e457dc54e7fa5b707a90935800278a0a29b6 ("piecewise cudagraph is the correct mode for driver 590.x on GB10")',
    ),
    595: (
        "ok",
        "reported running NCCL over RoCE on two GB10 Sparks",
        "",
        'https://github.com/NVIDIA/NV-Kernels/pull/590 ("NVIDIA driver 595.84 ... both systems pass with Linux 6.17.13")',
    ),
    610: (
        "ok",
        "reported serving on two GB10 Sparks",
        "",
        'https://github.com/MiaAI-Lab/GLM-5.3-Flash-EXL3-2x-DGX-Sparks/issues/47 ("on 2x DGX Spark ... (580 vs 610)")',
    ),
}


def _branch_row(number: int) -> Row:
    verdict, does, fix, source = BRANCHES[number]
    return Row(
        f"driver-{number}",
        f"driver branch {number}",
        "driver",
        verdict,
        lambda p: branch(p.driver_version) == number and _accepted(p),
        lambda p: f"{_driver(p)}: {does}",
        fix,
        source,
    )


def _not_accepted(platform: Platform) -> str:
    number = branch(platform.driver_version)
    # No closing period: fix_sentence() ends the sentence, as it does every row's.
    known = f" The {number} branch: {BRANCHES[number][1]}" if number in BRANCHES else " No public report runs this branch on a GB10"
    return f"{_driver(platform)}: its branch is not in gb10_host_supported_driver_branches ({', '.join(platform.accepted_branches) or 'empty'}).{known}"


ROWS: tuple[Row, ...] = (
    Row(
        "driver-proprietary-no-gpu",
        "proprietary kernel modules, no GPU",
        "driver",
        "refuse",
        lambda p: p.kernel_module == "proprietary" and not p.gpu_visible,
        lambda p: "NVIDIA's proprietary kernel modules are loaded and nvidia-smi lists no GPU: they do not bring up the GB10",
        "install the open kernel modules: " + _OPEN_DRIVER,
        _START9,
    ),
    Row(
        "driver-proprietary-modules",
        "proprietary kernel modules",
        "driver",
        "warn",
        lambda p: p.kernel_module == "proprietary" and p.gpu_visible,
        lambda p: (
            f"{_driver(p)} runs NVIDIA's proprietary kernel modules: NVIDIA supports Blackwell with the open ones only, and "
            "580.173.02's proprietary modules do not bring up the GB10"
        ),
        "install the open kernel modules before the next driver update: " + _OPEN_DRIVER,
        _START9,
    ),
    Row(
        "driver-branch-not-accepted",
        "driver branch not accepted",
        "driver",
        "refuse",
        lambda p: branch(p.driver_version) is not None and not _accepted(p),
        _not_accepted,
        "install a 580.x driver (" + _OPEN_DRIVER + "), or add the branch to gb10_host_supported_driver_branches",
        _DEEPOPS,
    ),
    *(_branch_row(number) for number in BRANCHES),
    Row(
        "driver-branch-unsourced",
        "driver branch without a field report",
        "driver",
        "warn",
        lambda p: _accepted(p) and branch(p.driver_version) not in BRANCHES,
        lambda p: f"{_driver(p)}: no public report runs this branch on a GB10; it is served because gb10_host_supported_driver_branches lists it",
        "should the server fail where a 580 driver does not, install a 580.x driver (" + _OPEN_DRIVER + ")",
        _DEEPOPS,
    ),
    Row(
        "kernel-kho-scratch",
        "kexec-handover scratch area",
        "kernel",
        "refuse",
        lambda p: p.fabric and _kho_scratch(p),
        lambda p: f"{_kho_evidence(p)}, which long-term pinning cannot use: NCCL's RoCE memory registration (ibv_reg_mr) fails with ENOMEM between Sparks",
        _KHO_FIX,
        _KHO,
    ),
    Row(
        "kernel-kho-scratch-alone",
        "kexec-handover scratch area",
        "kernel",
        "warn",
        lambda p: not p.fabric and _kho_scratch(p),
        lambda p: (
            f"{_kho_evidence(p)}: a Spark alone registers no memory with the ConnectX-7, but that memory is lost to the model, "
            "and a second Spark cannot join until it boots with kho=off"
        ),
        _KHO_FIX,
        _KHO,
    ),
    Row(
        "kernel-ok",
        "kernel",
        "kernel",
        "ok",
        lambda p: p.kernel_release is not None and not _kho_scratch(p),
        lambda p: (
            f"kernel {p.kernel_release}: no kexec-handover scratch area" + (" (booted with kho=off)" if "kho=off" in boot_options(p.kernel_cmdline) else "")
        ),
        "",
        _KHO,
    ),
    Row(
        "image-compat-driver-over-host",
        "CUDA forward-compatibility driver in the image",
        "image",
        "warn",
        _compat_over_host,
        lambda p: (
            f"the image carries CUDA's forward-compatibility driver {p.compat_driver_version} for the host's {p.driver_version}: its "
            "containers run that libcuda, which the host check cannot see, and only when the image's own entrypoint starts them"
        ),
        "keep the image's entrypoint (the roles do for NGC's nvidia_entrypoint.sh); should a container print \"compatibility mode is "
        "UNAVAILABLE\", use an image built for the host's driver",
        "https://github.com/gyliu513/langX101/pull/409 (the entrypoint enables CUDA Forward Compatibility; bypassing it fails "
        "FlashInfer JIT with cudaErrorUnsupportedPtxVersion on a GB10); https://github.com/eugr/spark-vllm-docker/issues/266 "
        '("compatibility mode is UNAVAILABLE" on 580.159.03)',
    ),
    Row(
        "image-compat-driver-not-over-host",
        "CUDA driver of the image",
        "image",
        "ok",
        lambda p: p.compat_driver_version is not None and p.driver_version is not None and not _compat_over_host(p),
        lambda p: (
            f"the image carries no CUDA forward-compatibility driver newer than the host's {p.driver_version}"
            + (f" (its own is {p.compat_driver_version})" if p.compat_driver_version else "")
        ),
        "",
        "",
    ),
)


def judge(platform: Platform, parts: Sequence[str] = PARTS) -> list[dict]:
    """The rows of these parts that apply to the platform, refusals first, each as a dict with `row`, `title`, `part`,
    `verdict`, `what`, `fix` and `source`."""
    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        raise PlatformError(f"the platform table has no part {unknown[0]!r} (its parts: {', '.join(PARTS)})")
    if platform.kernel_module not in (None, *KERNEL_MODULES):
        raise PlatformError(f"kernel_module is {platform.kernel_module!r}; the table knows {', '.join(KERNEL_MODULES)} or unread (None)")
    found = [
        {"row": row.name, "title": row.title, "part": row.part, "verdict": row.verdict, "what": row.says(platform), "fix": row.fix, "source": row.source}
        for row in ROWS
        if row.part in parts and row.applies(platform)
    ]
    return sorted(found, key=lambda item: VERDICTS.index(item["verdict"]))


def platform_of(facts: Mapping, **known) -> Platform:
    """A Platform from a mapping with its field names (gb10_facts' facts hold the host's; missing keys are unread)."""
    names = ("driver_version", "kernel_module", "kernel_release", "kernel_cmdline", "memory_cma_total_kib", "memory_cma_free_kib", "compat_driver_version")
    fields: dict = {name: facts.get(name) for name in names}
    if "gpus" in facts:
        fields["gpu_visible"] = bool(facts["gpus"])
    fields.update(known)
    fields["accepted_branches"] = tuple(str(item) for item in fields.get("accepted_branches") or ())
    return Platform(**fields)


def fix_sentence(what: str, fix: str, source: str) -> str:
    """What was found, then its fix and its source where there are ones: the wording of every refusal and warning the
    platform table and the host rule table give."""
    return f"{what}." + (f" Fix: {fix}." if fix else "") + (f" (Source: {source}.)" if source else "")


def verdicts_message(verdicts: Sequence[Mapping], verdict: str) -> str:
    """The rows of one verdict in one message, each with its fix and source ('' when none has it)."""
    return " ".join(fix_sentence(row["what"], row["fix"], row["source"]) for row in verdicts if row["verdict"] == verdict)
