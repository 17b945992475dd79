"""The host rule table, in both phases, on a real reading: the `make site` pair's worker as the doctor read it (its
gb10_facts facts, from a lab node with the stand-in nvidia-smi of a GB10; tests/unit/plugins/filter/fixtures/doctor/
worker-rebooted/), with gb10_host's defaults beside it as the role's read.yml adds them. Each rule test changes one
fact, as a fault would.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import disk_space, driver_branch, parse_meminfo, parse_nvrm_version, parse_smi_banner
from ansible_collections.sparkinfer.cluster.plugins.module_utils._host_rules import HostRuleError, findings_message, host_findings

READINGS = Path(__file__).parents[1] / "filter" / "fixtures" / "doctor"
# gb10_host's defaults (roles/gb10_host/defaults/main.yml) as read.yml adds them, on the pair: nvidia-ctk is there.
DEFAULTS = {
    "allowed_gpus": ["NVIDIA GB10"],
    "allowed_compute_capabilities": ["12.1"],
    "supported_driver_branches": ["580"],
    "cluster_size": 2,
    "required_memory_available_gib": 0,
    "required_disk_free_gib": 0,
    "configure_nvidia_runtime": True,
    "nvidia_ctk_path": "/usr/bin/nvidia-ctk",
    "nvidia_ctk_executable": True,
}


def worker(**changes) -> dict:
    host = json.loads((READINGS / "worker-rebooted" / "spark-2.json").read_text(encoding="utf-8"))["host"]
    return {**host, **DEFAULTS, **changes}


def flagged(reading: dict, phase: str) -> list[tuple[str, str]]:
    return [(finding["severity"], finding["what"]) for finding in host_findings(reading, phase) if finding["severity"] != "ok"]


@pytest.mark.parametrize("phase", ["preflight", "doctor"])
def test_the_pairs_worker_passes_in_both_phases(phase):
    assert flagged(worker(), phase) == []
    fine = [finding["what"] for finding in host_findings(worker(), phase)]
    assert fine[:3] == ["GPU visible", "driver branch 580", "kernel"]


def refusal(reading: dict) -> str:
    return findings_message("spark-2", host_findings(reading, "preflight"), "error")


def test_no_gpu_is_refused_with_why_and_what_to_do():
    assert refusal(worker(gpus=[], nvidia_smi_error="nvidia-smi not found: the NVIDIA driver is not installed")) == (
        "spark-2: no GPU visible: nvidia-smi not found: the NVIDIA driver is not installed. Fix: load the NVIDIA driver: `nvidia-smi` must print the GB10."
    )


def test_a_gpu_the_inventory_does_not_allow_is_refused_naming_both_variables():
    message = refusal(worker(allowed_gpus=["NVIDIA H100 80GB HBM3"]))
    assert message.startswith("spark-2: GPU not allowed: GPU 0 is NVIDIA GB10 with compute capability 12.1; allowed are NVIDIA H100 80GB HBM3 with 12.1.")
    assert "Fix: set gb10_host_allowed_gpus and gb10_host_allowed_compute_capabilities" in message
    assert flagged(worker(allowed_compute_capabilities=["9.0"]), "preflight") == [("error", "GPU not allowed")]


def test_the_platform_tables_refusal_comes_with_its_source():
    message = refusal(worker(supported_driver_branches=["590"]))
    assert message.startswith("spark-2: driver branch not accepted: NVIDIA driver 580.173.02: its branch is not in gb10_host_supported_driver_branches (590).")
    assert "(Source: NVIDIA/deepops" in message


def test_kexec_handover_scratch_is_refused_on_a_cluster_and_warned_of_alone():
    scratch = {"kernel_release": "7.0.0-1019-nvidia", "memory_cma_total_kib": 0, "memory_cma_free_kib": 940604}
    assert flagged(worker(**scratch), "preflight") == [("error", "kexec-handover scratch area")]
    assert flagged(worker(**scratch, cluster_size=1), "preflight") == [("warning", "kexec-handover scratch area")]


def test_docker_that_does_not_answer_is_refused():
    message = refusal(worker(docker_error="/usr/bin/docker info got no answer from the Docker daemon (rc=1): Cannot connect"))
    assert message.startswith("spark-2: Docker does not answer: /usr/bin/docker info got no answer from the Docker daemon (rc=1): Cannot connect.")


def test_a_missing_nvidia_runtime_is_refused_only_when_the_role_cannot_register_it():
    missing = {"docker_nvidia_runtime": False, "docker_runtimes": ["io.containerd.runc.v2", "runc"]}
    # The role registers it: nothing for the preflight to refuse; the doctor, reading a live node, calls it an error.
    assert flagged(worker(**missing), "preflight") == []
    assert flagged(worker(**missing), "doctor") == [("error", "Docker has no NVIDIA runtime")]
    without_ctk = refusal(worker(**missing, nvidia_ctk_executable=False))
    assert (
        "Docker 20.10.24+dfsg1 has no nvidia runtime (runtimes: io.containerd.runc.v2, runc), so containers cannot reach the GPU, "
        "and /usr/bin/nvidia-ctk (gb10_host_nvidia_ctk_path) is not an executable file."
    ) in without_ctk
    not_allowed = refusal(worker(**missing, configure_nvidia_runtime=False))
    assert "and the role may not register it (gb10_host_configure_nvidia_runtime is false)." in not_allowed


def test_memory_and_disk_the_plan_needs_are_refused_with_the_variable_that_asks():
    memory = refusal(worker(required_memory_available_gib=4096))
    assert "spark-2: too little memory available: " in memory
    assert "gb10_host_required_memory_available_gib asks for 4096 GiB." in memory
    disk = refusal(worker(required_disk_free_gib=1048576))
    assert "gb10_host_required_disk_free_gib asks for 1048576 GiB." in disk
    assert "point gb10_host_model_dir at a larger filesystem" in disk


def test_the_doctor_judges_the_next_launch_by_free_memory_and_the_running_server_by_what_is_left():
    reading = worker(required_memory_available_gib=15)
    # The rank is down: free memory is what vLLM's start-up check sees.
    assert flagged({**reading, "rank_running": False}, "doctor") == [("error", "too little free memory for the next launch")]
    # The rank runs: the doctor's floor of available memory, not the plan.
    assert flagged({**reading, "rank_running": True}, "doctor") == []
    assert flagged({**reading, "rank_running": True, "memory_available_min_gib": 100}, "doctor") == [
        ("warning", "memory nearly exhausted beside the running server")
    ]


def test_the_doctors_own_floors_and_earlyoom_are_not_the_preflights():
    reading = worker(disk_free_min_gib=1048576, earlyoom_wanted=True, earlyoom_active=False, earlyoom_state="inactive")
    assert flagged(reading, "preflight") == []
    assert flagged(reading, "doctor") == [("warning", "little disk free"), ("warning", "earlyoom is not running")]


def test_an_unknown_phase_is_refused():
    with pytest.raises(HostRuleError, match="phase is 'deploy'; the rules know preflight, doctor"):
        host_findings(worker(), "deploy")


def test_the_message_of_a_severity_no_finding_has_is_empty():
    assert findings_message("spark-2", host_findings(worker(), "preflight"), "error") == ""


def doctor_message(reading: dict, severity: str) -> str:
    return findings_message("spark-2", host_findings(reading, "doctor"), severity)


def test_a_gpu_nvidia_smi_does_not_list_is_named_without_an_error_of_its_own():
    assert refusal(worker(gpus=[])) == "spark-2: no GPU visible: nvidia-smi lists no GPU. Fix: load the NVIDIA driver: `nvidia-smi` must print the GB10."


def test_the_visible_gpus_are_listed_each_with_its_compute_capability():
    gb10 = worker()["gpus"][0]
    # A host that lists two GPUs (the worker's GB10 twice, the second at index 1): each is named.
    visible = host_findings(worker(gpus=[gb10, {**gb10, "index": 1}]), "preflight")[0]
    assert visible == {"severity": "ok", "what": "GPU visible", "evidence": "NVIDIA GB10 (SM 12.1), NVIDIA GB10 (SM 12.1)", "fix": "", "source": ""}


def test_the_refusal_of_a_gpu_lists_every_allowed_name_and_capability():
    assert refusal(worker(allowed_gpus=["NVIDIA H100 80GB HBM3", "NVIDIA GH200 480GB"], allowed_compute_capabilities=["9.0", "10.0"])) == (
        "spark-2: GPU not allowed: GPU 0 is NVIDIA GB10 with compute capability 12.1; allowed are NVIDIA H100 80GB HBM3, NVIDIA GH200 480GB "
        "with 9.0, 10.0. Fix: set gb10_host_allowed_gpus and gb10_host_allowed_compute_capabilities to deploy on other GPUs."
    )


def test_a_reading_without_the_allowed_gpus_leaves_the_gpu_unjudged():
    reading = worker(allowed_compute_capabilities=["9.0"])
    del reading["allowed_gpus"]
    assert flagged(reading, "preflight") == []


def test_the_preflight_judges_the_driver_and_the_kernel_not_the_image():
    assert [finding["what"] for finding in host_findings(worker(), "preflight")] == ["GPU visible", "driver branch 580", "kernel"]


def test_docker_that_does_not_answer_is_refused_with_how_to_start_it():
    assert refusal(worker(docker_error="/usr/bin/docker info got no answer from the Docker daemon (rc=1): Cannot connect")) == (
        "spark-2: Docker does not answer: /usr/bin/docker info got no answer from the Docker daemon (rc=1): Cannot connect. "
        "Fix: install the Docker engine (DGX OS ships it) and start it with `sudo systemctl enable --now docker`; `sudo docker info` must answer."
    )


MISSING_RUNTIME = {"docker_nvidia_runtime": False, "docker_runtimes": ["io.containerd.runc.v2", "runc"]}


def test_a_missing_nvidia_runtime_the_role_cannot_register_is_refused_with_both_ways_to_register_it():
    assert refusal(worker(**MISSING_RUNTIME, configure_nvidia_runtime=False)) == (
        "spark-2: Docker has no NVIDIA runtime: Docker 20.10.24+dfsg1 has no nvidia runtime (runtimes: io.containerd.runc.v2, runc), "
        "so containers cannot reach the GPU, and the role may not register it (gb10_host_configure_nvidia_runtime is false). "
        "Fix: install nvidia-container-toolkit (DGX OS ships it), or run `sudo nvidia-ctk runtime configure --runtime=docker` and "
        "`sudo systemctl restart docker`, or let the role register it with gb10_host_configure_nvidia_runtime: true."
    )


def test_the_doctor_sends_a_missing_nvidia_runtime_the_role_registers_to_host_yml():
    assert doctor_message(worker(**MISSING_RUNTIME), "error") == (
        "spark-2: Docker has no NVIDIA runtime: Docker 20.10.24+dfsg1 has no nvidia runtime (runtimes: io.containerd.runc.v2, runc), "
        "so containers cannot reach the GPU. Fix: run host.yml: gb10_host registers it with nvidia-ctk and restarts Docker once."
    )


def test_a_reading_without_configure_nvidia_runtime_lets_the_role_register_it():
    reading = worker(**MISSING_RUNTIME, nvidia_ctk_executable=False)
    del reading["configure_nvidia_runtime"]
    # The role registers by default: what stops it is nvidia-ctk, not the variable.
    assert "and /usr/bin/nvidia-ctk (gb10_host_nvidia_ctk_path) is not an executable file." in refusal(reading)


def test_the_doctor_reports_the_memory_it_reads():
    memory = [finding for finding in host_findings(worker(), "doctor") if finding["what"] == "memory"]
    assert memory == [
        {"severity": "ok", "what": "memory", "evidence": "20.4 GiB available, 11.9 GiB free, page cache 7.8 GiB, no swap", "fix": "", "source": ""}
    ]
    # The same node with a swap partition.
    assert "page cache 7.8 GiB, swap on 1 device(s)." in findings_message("spark-2", host_findings(worker(swap_devices=1), "doctor"), "ok")


def test_too_little_memory_available_is_refused_with_what_holds_it_and_the_figure_asked():
    assert refusal(worker(required_memory_available_gib=100.5)) == (
        "spark-2: too little memory available: 20.4 GiB available (MemAvailable, of 23.5 GiB); gb10_host_required_memory_available_gib asks "
        "for 100.5 GiB. Fix: stop what else holds memory (other containers, a desktop session: `sudo systemctl isolate multi-user.target`), "
        "spread the model over more nodes, or lower gb10_host_required_memory_available_gib if the plan allows."
    )


# The worker's reading with exactly 20 GiB available (MemAvailable 20971520 kB) and, where a test says so, free.
TWENTY_GIB_KIB = 20971520


def test_memory_exactly_at_the_figure_asked_or_the_floor_is_enough():
    reading = worker(memory_available_kib=TWENTY_GIB_KIB, required_memory_available_gib=20)
    assert flagged(reading, "preflight") == []
    assert flagged({**reading, "rank_running": True, "memory_available_min_gib": 20}, "doctor") == []
    assert flagged({**reading, "rank_running": False, "memory_free_kib": TWENTY_GIB_KIB}, "doctor") == []


def test_a_full_page_cache_before_the_launch_is_to_be_dropped_when_available_memory_suffices():
    reading = worker(memory_available_kib=TWENTY_GIB_KIB, required_memory_available_gib=20, rank_running=False)
    assert doctor_message(reading, "error") == (
        "spark-2: too little free memory for the next launch: 20.0 GiB available, 11.9 GiB free, page cache 7.8 GiB, no swap; "
        "gb10_host_required_memory_available_gib asks for 20 GiB. Fix: drop the page cache before the launch "
        "(gb10_host_drop_page_cache: true, or `sudo sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'`)."
    )


def test_without_a_figure_asked_or_a_floor_no_memory_and_no_disk_is_too_little():
    # The worker's reading down to half a GiB available, free and on disk, with every floor at 0 (unset).
    reading = worker(memory_available_kib=524288, memory_free_kib=524288, disk_free_bytes=536870912, memory_available_min_gib=0, disk_free_min_gib=0)
    assert flagged(reading, "preflight") == []
    assert flagged({**reading, "rank_running": False}, "doctor") == []
    assert flagged({**reading, "rank_running": True}, "doctor") == []


def test_the_doctor_warns_of_disk_under_its_floor_with_where_it_looked():
    assert doctor_message(worker(disk_free_min_gib=100), "warning") == (
        "spark-2: little disk free: 58.9 GiB free at /opt/sparkinfer/models, under 100 GiB (gb10_host_doctor_disk_free_min_gib). "
        "Fix: remove old models and images (`docker image prune`)."
    )
    # Exactly the floor (20 GiB free) is enough.
    assert flagged(worker(disk_free_bytes=21474836480), "doctor") == []


def test_earlyoom_that_runs_as_wanted_is_not_reported_and_one_that_does_not_is_named_with_its_state():
    assert flagged(worker(earlyoom_wanted=True, earlyoom_active=True, earlyoom_state="active"), "doctor") == []
    assert doctor_message(worker(earlyoom_wanted=True), "warning") == (
        "spark-2: earlyoom is not running: earlyoom is inactive though gb10_host_earlyoom_enabled is true. "
        "Fix: run host.yml, or `sudo systemctl enable --now earlyoom`."
    )


def test_the_findings_of_one_severity_are_one_message_in_the_tables_order():
    assert refusal(worker(required_memory_available_gib=100, required_disk_free_gib=100)) == (
        "spark-2: too little memory available: 20.4 GiB available (MemAvailable, of 23.5 GiB); gb10_host_required_memory_available_gib asks "
        "for 100 GiB. Fix: stop what else holds memory (other containers, a desktop session: `sudo systemctl isolate multi-user.target`), "
        "spread the model over more nodes, or lower gb10_host_required_memory_available_gib if the plan allows. "
        "spark-2: too little disk free: 58.9 GiB free at /opt/sparkinfer/models; gb10_host_required_disk_free_gib asks for 100 GiB. "
        "Fix: free space there (old models, `docker image prune`), or point gb10_host_model_dir at a larger filesystem."
    )


# ------------------------------------------------------------------ the rules on real outputs, as the parsers read them
#
# The worker's reading with the facts gb10_facts reads from each output replaced by what the collection's parsers make
# of a real one (fixtures/gb10/SOURCES.md), mapped as gb10_facts maps them: the driver from plain nvidia-smi's banner,
# the kernel modules from /proc/driver/nvidia/version, the memory from /proc/meminfo, the disk from statfs(2)'s
# f_frsize, f_blocks and f_bavail (what `stat -f` prints as Fundamental block size, Blocks Total and Available). The
# findings each test expects were read off the outputs by hand.

GB10 = Path(__file__).parent / "fixtures" / "gb10"


def output(name: str) -> str:
    return (GB10 / name).read_text(encoding="utf-8")


def smi_facts(name: str) -> dict:
    banner = parse_smi_banner(output(name))
    return {"driver_version": banner.driver_version, "driver_branch": driver_branch(banner.driver_version), "cuda_version": banner.cuda_version}


def meminfo_facts(name: str) -> dict:
    values = parse_meminfo(output(name))
    return {
        "memory_total_kib": values["MemTotal"],
        "memory_available_kib": values["MemAvailable"],
        "memory_free_kib": values["MemFree"],
        "memory_cached_kib": values["Cached"],
        "memory_cma_total_kib": values.get("CmaTotal"),
        "memory_cma_free_kib": values.get("CmaFree"),
    }


def statfs_facts(name: str, checked: str) -> dict:
    """The disk facts of `stat -f PATH`'s output: statfs(2)'s fields as it prints them."""
    text = output(name)
    frsize = re.search(r"Fundamental block size: (\d+)", text)
    blocks = re.search(r"Blocks: Total: (\d+)\s+Free: \d+\s+Available: (\d+)", text)
    assert frsize and blocks, f"{name} is no `stat -f` output"
    free, total = disk_space(int(frsize.group(1)), int(blocks.group(1)), int(blocks.group(2)))
    return {"disk_path_checked": checked, "disk_free_bytes": free, "disk_total_bytes": total}


# A DGX Spark's plain nvidia-smi (driver 580.173.02) and /proc/driver/nvidia/version (open modules, 580.142).
SPARK_580 = "nvidia-smi-580.173.02-plain.txt"
SPARK_580_DESKTOP = "nvidia-smi-580.95.05-plain-desktop.txt"
SPARK_OPEN_MODULES = "nvrm-version-580.142-open-aarch64-gb10.txt"
# Driver 590.48.01 on an RTX A400 (x86_64): no 590 output of a Spark is public.
RTX_590 = "nvidia-smi-590.48.01-plain-rtx-a400-x86_64.txt"
# NVIDIA's proprietary kernel module 384.98 (x86_64).
PROPRIETARY_384 = "nvrm-version-384.98-proprietary-x86_64.txt"
# The lines of a Spark's /proc/meminfo read with no runner up, its page cache full (MemTotal 127600816 kB, MemFree
# 3139656 kB, MemAvailable 40174336 kB, Cached 37694160 kB: 121.7, 3.0, 38.3 and 35.9 GiB).
SPARK_MEMINFO = "meminfo-gb10-lines-after-runner-stop.txt"
# `stat -f /` on the lab machine: fundamental block size 4096, 66053021 blocks, 15616459 available to users (59.6 GiB of
# 252.0 GiB; 55071752 free counting root's reserve, 210.1 GiB).
LAB_STATFS = "stat-f-root-lab-host.txt"
DEEPOPS_580 = "NVIDIA/deepops roles/nvidia-dgx/vars/ubuntu-24.04.yml @ 03e19e9582852da024edc88e8345baec79377155 (DGX Spark: nvidia-driver-580-open)"


def test_the_parsers_read_the_driver_and_the_kernel_modules_off_the_real_outputs():
    assert smi_facts(SPARK_580) == {"driver_version": "580.173.02", "driver_branch": "580", "cuda_version": "13.0"}
    assert smi_facts(RTX_590) == {"driver_version": "590.48.01", "driver_branch": "590", "cuda_version": "13.1"}
    assert parse_nvrm_version(output(SPARK_OPEN_MODULES)) == ("open", "580.142")
    assert parse_nvrm_version(output(PROPRIETARY_384)) == ("proprietary", "384.98")


@pytest.mark.parametrize(("banner", "driver"), [(SPARK_580, "580.173.02"), (SPARK_580_DESKTOP, "580.95.05")])
def test_a_real_spark_driver_of_the_580_branch_with_open_modules_passes_with_its_source(banner, driver):
    reading = worker(**smi_facts(banner), kernel_module=parse_nvrm_version(output(SPARK_OPEN_MODULES))[0])
    assert flagged(reading, "preflight") == []
    branch = next(finding for finding in host_findings(reading, "doctor") if finding["what"] == "driver branch 580")
    assert branch == {
        "severity": "ok",
        "what": "driver branch 580",
        "evidence": f"NVIDIA driver {driver}: the branch DGX OS ships for the Spark",
        "fix": "",
        "source": DEEPOPS_580,
    }


def test_a_real_590_driver_is_refused_by_default_with_what_590_does_on_gb10():
    assert refusal(worker(**smi_facts(RTX_590))) == (
        "spark-2: driver branch not accepted: NVIDIA driver 590.48.01: its branch is not in gb10_host_supported_driver_branches (580). "
        "The 590 branch: its full CUDA graphs deadlock or crash in capture on GB10 unified memory; piecewise CUDA graphs run. "
        "Fix: install a 580.x driver (sudo apt install nvidia-driver-580-open (the driver DGX OS ships), then reboot), or add the branch "
        f"to gb10_host_supported_driver_branches. (Source: {DEEPOPS_580}.)"
    )


def test_a_real_590_driver_the_inventory_accepts_is_warned_of_with_the_piecewise_fix():
    reading = worker(**smi_facts(RTX_590), supported_driver_branches=["580", "590"])
    assert flagged(reading, "preflight") == [("warning", "driver branch 590")]
    warned = findings_message("spark-2", host_findings(reading, "doctor"), "warning")
    assert warned.startswith(
        "spark-2: driver branch 590: NVIDIA driver 590.48.01: its full CUDA graphs deadlock or crash in capture on GB10 unified memory; "
        "piecewise CUDA graphs run. Fix: install a 580.x driver (nvidia-driver-580-open); on 590 serve with vllm_serve_extra_args: "
        '[--compilation-config, \'{"cudagraph_mode": "piecewise"}\']. (Source: eugr/spark-vllm-docker README.md'
    )


def test_real_proprietary_modules_of_a_branch_no_one_runs_on_gb10_are_refused_and_warned_of():
    # The version file names the driver too: its kernel module's version is the driver's.
    flavour, version = parse_nvrm_version(output(PROPRIETARY_384))
    reading = worker(kernel_module=flavour, driver_version=version, driver_branch=driver_branch(version))
    assert flagged(reading, "preflight") == [("error", "driver branch not accepted"), ("warning", "proprietary kernel modules")]
    assert refusal(reading) == (
        "spark-2: driver branch not accepted: NVIDIA driver 384.98: its branch is not in gb10_host_supported_driver_branches (580). "
        "No public report runs this branch on a GB10. Fix: install a 580.x driver (sudo apt install nvidia-driver-580-open (the driver "
        f"DGX OS ships), then reboot), or add the branch to gb10_host_supported_driver_branches. (Source: {DEEPOPS_580}.)"
    )
    assert findings_message("spark-2", host_findings(reading, "preflight"), "warning").startswith(
        "spark-2: proprietary kernel modules: NVIDIA driver 384.98 runs NVIDIA's proprietary kernel modules: NVIDIA supports Blackwell "
        "with the open ones only, and 580.173.02's proprietary modules do not bring up the GB10. Fix: install the open kernel modules "
        "before the next driver update"
    )
    # nvidia-smi lists no GPU under those modules (as 580.173.02's proprietary ones left a GB10): three refusals.
    assert flagged({**reading, "gpus": []}, "preflight") == [
        ("error", "no GPU visible"),
        ("error", "proprietary kernel modules, no GPU"),
        ("error", "driver branch not accepted"),
    ]


def test_a_real_spark_meminfo_is_read_and_reported_as_the_kernel_printed_it():
    reading = worker(**meminfo_facts(SPARK_MEMINFO))
    assert (reading["memory_cma_total_kib"], reading["memory_cma_free_kib"]) == (131072, 69320)
    memory = [finding for finding in host_findings(reading, "doctor") if finding["what"] == "memory"]
    assert memory == [
        {"severity": "ok", "what": "memory", "evidence": "38.3 GiB available, 3.0 GiB free, page cache 35.9 GiB, no swap", "fix": "", "source": ""}
    ]


def test_a_real_spark_meminfo_under_the_doctors_floor_beside_a_running_server_is_warned_of():
    reading = worker(**meminfo_facts(SPARK_MEMINFO), rank_running=True)
    # 38.3 GiB available: above a floor of 38 GiB, under one of 39.
    assert flagged({**reading, "memory_available_min_gib": 38}, "doctor") == []
    assert doctor_message({**reading, "memory_available_min_gib": 39}, "warning") == (
        "spark-2: memory nearly exhausted beside the running server: 38.3 GiB available, 3.0 GiB free, page cache 35.9 GiB, no swap; "
        "under 39 GiB (gb10_host_doctor_memory_available_min_gib). Fix: stop what else holds memory (other containers, a desktop "
        "session: `sudo systemctl isolate multi-user.target`), or lower --gpu-memory-utilization."
    )


def test_a_real_spark_meminfo_whose_page_cache_holds_the_launchs_memory_is_to_be_dropped():
    # 3.0 GiB free, 38.3 GiB available: a launch asking 20 GiB fails vLLM's start-up check until the cache is dropped.
    reading = worker(**meminfo_facts(SPARK_MEMINFO), rank_running=False, required_memory_available_gib=20)
    assert doctor_message(reading, "error") == (
        "spark-2: too little free memory for the next launch: 38.3 GiB available, 3.0 GiB free, page cache 35.9 GiB, no swap; "
        "gb10_host_required_memory_available_gib asks for 20 GiB. Fix: drop the page cache before the launch "
        "(gb10_host_drop_page_cache: true, or `sudo sh -c 'sync; echo 3 > /proc/sys/vm/drop_caches'`)."
    )
    # Asking more than is available: dropping the cache is not enough.
    assert "spread the model over more nodes" in doctor_message({**reading, "required_memory_available_gib": 40}, "error")
    # The preflight judges available memory only: 38 GiB pass, 39 do not.
    assert flagged({**reading, "required_memory_available_gib": 38}, "preflight") == []
    assert refusal({**reading, "required_memory_available_gib": 39}).startswith(
        "spark-2: too little memory available: 38.3 GiB available (MemAvailable, of 121.7 GiB); gb10_host_required_memory_available_gib asks for 39 GiB."
    )


def test_the_kho_rule_finds_no_scratch_area_in_a_real_spark_meminfo():
    # CmaFree 69320 kB is under CmaTotal 131072 kB: no kexec-handover scratch area, on a 7.0 kernel too.
    reading = worker(**meminfo_facts(SPARK_MEMINFO), kernel_release="7.0.0-1019-nvidia")
    assert flagged(reading, "preflight") == []


def test_the_disk_a_real_statfs_gives_users_is_what_the_floors_judge_not_roots_reserve():
    reading = worker(**statfs_facts(LAB_STATFS, "/"))
    assert (reading["disk_free_bytes"], reading["disk_total_bytes"]) == (15616459 * 4096, 66053021 * 4096)
    # 59.6 GiB available to users (210.1 GiB free counting root's reserve): above a floor of 59 GiB, under one of 60.
    assert flagged({**reading, "disk_free_min_gib": 59}, "doctor") == []
    assert doctor_message({**reading, "disk_free_min_gib": 60}, "warning") == (
        "spark-2: little disk free: 59.6 GiB free at /, under 60 GiB (gb10_host_doctor_disk_free_min_gib). "
        "Fix: remove old models and images (`docker image prune`)."
    )
    assert refusal({**reading, "required_disk_free_gib": 100}) == (
        "spark-2: too little disk free: 59.6 GiB free at /; gb10_host_required_disk_free_gib asks for 100 GiB. "
        "Fix: free space there (old models, `docker image prune`), or point gb10_host_model_dir at a larger filesystem."
    )
