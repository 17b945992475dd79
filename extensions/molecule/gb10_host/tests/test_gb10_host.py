"""Verify a lab node after the gb10_host role: a Spark-like host that the role accepted."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

SCENARIO_DIR = Path(__file__).resolve().parents[1]
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def test_systemd_is_running(host):
    state = host.run("systemctl is-system-running")
    assert state.stdout.strip() == "running", host.run("systemctl --failed --no-legend").stdout


def test_inner_docker_engine_answers(host):
    server = host.run("docker version --format '{{.Server.Version}}'")
    assert server.rc == 0, server.stderr
    assert server.stdout.strip().startswith("20.10"), server.stdout


def test_standin_lists_one_gb10(host):
    listing = host.run("nvidia-smi -L")
    assert listing.rc == 0, listing.stderr
    lines = listing.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("GPU 0: NVIDIA GB10 (UUID: GPU-")


def test_gb10_facts_report_the_gpu_and_unified_memory(host):
    facts = host.ansible("sparkinfer.cluster.gb10_facts", check=False)["ansible_facts"]["sparkinfer_gb10"]
    assert [gpu["name"] for gpu in facts["gpus"]] == ["NVIDIA GB10"]
    assert facts["gpus"][0]["compute_cap"] == "12.1"
    assert facts["driver_branch"] == "580"
    assert facts["cuda_version"] == "13.0"
    assert facts["unified_memory"] is True
    meminfo_total_kib = int(host.run("awk '/^MemTotal:/ {print $2}' /proc/meminfo").stdout)
    assert facts["memory_total_kib"] == meminfo_total_kib
    assert 0 < facts["memory_available_kib"] <= meminfo_total_kib


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"gb10_host_allowed_gpus": ["NVIDIA H100 80GB HBM3"]},
            "is NVIDIA GB10 with compute capability 12.1; allowed are NVIDIA H100",
        ),
        ({"gb10_host_supported_driver_branches": ["590"]}, "supported branches are 590"),
    ],
)
def test_role_refuses_a_host_outside_its_allowed_lists(override, message):
    playbook = SCENARIO_DIR.parent / "_shared" / "converge.yml"
    run = subprocess.run(
        ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], str(playbook), "-e", json.dumps(override)],
        capture_output=True,
        text=True,
        env={**os.environ, "MOLECULE_SCENARIO_NAME": "gb10_host", "ANSIBLE_NOCOLOR": "1"},
        check=False,
    )
    # ansible-core 2.19 reports task failures on stderr.
    output = " ".join(ANSI_ESCAPE.sub("", run.stdout + run.stderr).split())
    assert run.returncode == 2, output[-2000:]
    assert message in output, output[-2000:]
