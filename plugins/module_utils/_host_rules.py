# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The rules a DGX Spark host is judged by, in one table: gb10_host's preflight refuses on their errors before it
changes the host, and the doctor reports every finding of a live node. One rule, one wording, in both.

A host's reading is gb10_facts' facts with what gb10_host reads beside them (the cluster's size, whether nvidia-ctk
is executable; for the doctor whether the node's vLLM rank runs, its swap devices and earlyoom's state) and the role's
variables the rules compare with, by their names without the prefix (gb10_host_doctor_memory_available_min_gib,
gb10_host_doctor_disk_free_min_gib and gb10_host_earlyoom_enabled as memory_available_min_gib, disk_free_min_gib and
earlyoom_wanted). A setting a reading lacks leaves its rule unjudged. Each finding is a dict with `severity` (error,
warning or ok), `what`, `evidence`, `fix` and `source`. No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from ansible_collections.sparkinfer.cluster.plugins.module_utils._platform import SEVERITY_OF_VERDICT, fix_sentence, judge, platform_of

PHASES = ("preflight", "doctor")
SEVERITIES = ("error", "warning", "ok")
GIB_KIB = 1048576
GIB = 1073741824


class HostRuleError(ValueError):
    """A reading the rules cannot judge (named in the message)."""


def _finding(severity: str, what: str, evidence: str, fix: str = "", source: str = "") -> dict:
    return {"severity": severity, "what": what, "evidence": evidence, "fix": fix, "source": source}


def _gib(kib: float) -> str:
    return f"{kib / GIB_KIB:.1f} GiB"


def _figure(value: float) -> str:
    """A variable's figure as its user wrote it: 4096, 0.5 (not 4096.0, or 1.04858e+06 for 1048576)."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _gpu_visible(host: Mapping, phase: str) -> Iterator[dict]:
    if not host["gpus"]:
        yield _finding(
            "error",
            "no GPU visible",
            host.get("nvidia_smi_error") or "nvidia-smi lists no GPU",
            "load the NVIDIA driver: `nvidia-smi` must print the GB10",
        )
    else:
        yield _finding("ok", "GPU visible", ", ".join(f"{gpu['name']} (SM {gpu['compute_cap']})" for gpu in host["gpus"]))


def _gpu_allowed(host: Mapping, phase: str) -> Iterator[dict]:
    names, capabilities = host.get("allowed_gpus"), host.get("allowed_compute_capabilities")
    if names is None or capabilities is None:
        return
    for gpu in host["gpus"]:
        if gpu["name"] not in names or gpu["compute_cap"] not in capabilities:
            yield _finding(
                "error",
                "GPU not allowed",
                f"GPU {gpu['index']} is {gpu['name']} with compute capability {gpu['compute_cap']}; allowed are "
                f"{', '.join(names)} with {', '.join(capabilities)}",
                "set gb10_host_allowed_gpus and gb10_host_allowed_compute_capabilities to deploy on other GPUs",
            )


def _platform(host: Mapping, phase: str) -> Iterator[dict]:
    platform = platform_of(host, accepted_branches=host.get("supported_driver_branches") or (), fabric=host["cluster_size"] > 1)
    for row in judge(platform, ["driver", "kernel"]):
        yield _finding(SEVERITY_OF_VERDICT[row["verdict"]], row["title"], row["what"], row["fix"], row["source"])


def _docker(host: Mapping, phase: str) -> Iterator[dict]:
    if host.get("docker_error"):
        yield _finding(
            "error",
            "Docker does not answer",
            host["docker_error"],
            "install the Docker engine (DGX OS ships it) and start it with `sudo systemctl enable --now docker`; `sudo docker info` must answer",
        )
        return
    if host.get("docker_nvidia_runtime"):
        return
    runtimes = ", ".join(host.get("docker_runtimes") or [])
    missing = f"Docker {host.get('docker_version')} has no nvidia runtime (runtimes: {runtimes}), so containers cannot reach the GPU"
    manual = (
        "install nvidia-container-toolkit (DGX OS ships it), or run `sudo nvidia-ctk runtime configure --runtime=docker` and `sudo systemctl restart docker`"
    )
    registrable = host.get("configure_nvidia_runtime", True) and host.get("nvidia_ctk_executable", True)
    if registrable:
        if phase == "doctor":
            yield _finding("error", "Docker has no NVIDIA runtime", missing, "run host.yml: gb10_host registers it with nvidia-ctk and restarts Docker once")
        return
    why = (
        "the role may not register it (gb10_host_configure_nvidia_runtime is false)"
        if not host.get("configure_nvidia_runtime", True)
        else f"{host.get('nvidia_ctk_path')} (gb10_host_nvidia_ctk_path) is not an executable file"
    )
    fix = f"{manual}, or let the role register it with gb10_host_configure_nvidia_runtime: true"
    yield _finding("error", "Docker has no NVIDIA runtime", f"{missing}, and {why}", fix)


def _memory(host: Mapping, phase: str) -> Iterator[dict]:
    available, free, cached = host["memory_available_kib"], host["memory_free_kib"], host["memory_cached_kib"]
    swap = f"swap on {host['swap_devices']} device(s)" if host.get("swap_devices") else "no swap"
    required = float(host.get("required_memory_available_gib") or 0)
    asks = f"; gb10_host_required_memory_available_gib asks for {_figure(required)} GiB"
    elsewhere = "stop what else holds memory (other containers, a desktop session: `sudo systemctl isolate multi-user.target`)"
    if phase == "preflight":
        if available < required * GIB_KIB:
            yield _finding(
                "error",
                "too little memory available",
                f"{_gib(available)} available (MemAvailable, of {_gib(host['memory_total_kib'])}){asks}",
                f"{elsewhere}, spread the model over more nodes, or lower gb10_host_required_memory_available_gib if the plan allows",
            )
        return
    evidence = f"{_gib(available)} available, {_gib(free)} free, page cache {_gib(cached)}, {swap}"
    floor = float(host.get("memory_available_min_gib") or 0)
    if host.get("rank_running") and available < floor * GIB_KIB:
        yield _finding(
            "warning",
            "memory nearly exhausted beside the running server",
            f"{evidence}; under {_figure(floor)} GiB (gb10_host_doctor_memory_available_min_gib)",
            f"{elsewhere}, or lower --gpu-memory-utilization",
        )
    elif not host.get("rank_running") and free < required * GIB_KIB:
        # vLLM's start-up check on GB10 sees free memory, not available memory: a full page cache counts against it.
        yield _finding(
            "error",
            "too little free memory for the next launch",
            evidence + asks,
            "drop the page cache before the launch (gb10_host_drop_page_cache: true, or `sudo sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'`)"
            if available >= required * GIB_KIB
            else f"{elsewhere}, or spread the model over more nodes",
        )
    else:
        yield _finding("ok", "memory", evidence)


# Per phase, the floor of free disk space at the model directory: the variable that sets it, and the finding under it.
_DISK_FLOORS = {
    "preflight": (
        "required_disk_free_gib",
        "error",
        "too little disk free",
        "{where}; gb10_host_required_disk_free_gib asks for {floor} GiB",
        "free space there (old models, `docker image prune`), or point gb10_host_model_dir at a larger filesystem",
    ),
    "doctor": (
        "disk_free_min_gib",
        "warning",
        "little disk free",
        "{where}, under {floor} GiB (gb10_host_doctor_disk_free_min_gib)",
        "remove old models and images (`docker image prune`)",
    ),
}


def _disk(host: Mapping, phase: str) -> Iterator[dict]:
    setting, severity, what, says, fix = _DISK_FLOORS[phase]
    free, floor = host["disk_free_bytes"] / GIB, float(host.get(setting) or 0)
    if free < floor:
        yield _finding(severity, what, says.format(where=f"{free:.1f} GiB free at {host['disk_path_checked']}", floor=_figure(floor)), fix)


def _earlyoom(host: Mapping, phase: str) -> Iterator[dict]:
    if phase == "doctor" and host.get("earlyoom_wanted") and not host.get("earlyoom_active"):
        yield _finding(
            "warning",
            "earlyoom is not running",
            f"earlyoom is {host.get('earlyoom_state')} though gb10_host_earlyoom_enabled is true",
            "run host.yml, or `sudo systemctl enable --now earlyoom`",
        )


# In order: the preflight's refusal and the doctor's report list their findings so (a GPU that is not visible is named
# with the platform row that explains it, proprietary kernel modules, in the same refusal).
RULES: tuple[Callable[[Mapping, str], Iterator[dict]], ...] = (_gpu_visible, _platform, _gpu_allowed, _docker, _memory, _disk, _earlyoom)


def host_findings(host: Mapping, phase: str) -> list[dict]:
    """Every rule's findings on a host's reading in this phase, in the table's order."""
    if phase not in PHASES:
        raise HostRuleError(f"phase is {phase!r}; the rules know {', '.join(PHASES)}")
    return [finding for rule in RULES for finding in rule(host, phase)]


def findings_message(node: str, findings: Sequence[Mapping], severity: str) -> str:
    """The findings of one severity in one message, each with its evidence, fix and source ('' when there is none)."""
    return " ".join(
        fix_sentence(f"{node}: {finding['what']}: {finding['evidence']}", finding["fix"], finding["source"])
        for finding in findings
        if finding["severity"] == severity
    )
