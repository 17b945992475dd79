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
