"""The host rule table, in both phases, on a real reading: the `make site` pair's worker as the doctor read it (its
gb10_facts facts, from a lab node with the stand-in nvidia-smi of a GB10; tests/unit/plugins/filter/fixtures/doctor/
worker-rebooted/), with gb10_host's defaults beside it as the role's read.yml adds them. Each rule test changes one
fact, as a fault would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
