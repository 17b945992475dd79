"""Verify a lab node after the gb10_host role: a Spark-like host that the role accepted and prepared."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

SCENARIO_DIR = Path(__file__).resolve().parents[1]
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# What the scenario sets (molecule.yml), read from there so that the test follows it.
SCENARIO_VARS = yaml.safe_load((SCENARIO_DIR / "molecule.yml").read_text(encoding="utf-8"))["provisioner"]["inventory"]["group_vars"]["sparkinfer_nodes"]
DEPLOY_USER = SCENARIO_VARS["gb10_host_deploy_user"]
SYSCTLS = SCENARIO_VARS["gb10_host_sysctls"]
# Role defaults the scenario keeps.
MODEL_DIR = "/opt/sparkinfer/models"
CACHE_DIRS = ["/opt/sparkinfer/cache/huggingface", "/opt/sparkinfer/cache/vllm", "/opt/sparkinfer/cache/flashinfer", "/opt/sparkinfer/cache/triton"]
SYSCTL_FILE = "/etc/sysctl.d/90-sparkinfer-gb10.conf"
EARLYOOM_ARGS = "-M 524288,102400 -s 100 -r 60"


def journal(host, unit: str) -> str:
    return host.run(f"journalctl -u {unit} --no-pager -n 40").stdout


def run_converge(*extra: str) -> tuple[int, str]:
    """Run the shared converge playbook against the scenario's node; return rc and the flattened output."""
    playbook = SCENARIO_DIR.parent / "_shared" / "converge.yml"
    run = subprocess.run(
        ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], str(playbook), *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "MOLECULE_SCENARIO_NAME": "gb10_host", "ANSIBLE_NOCOLOR": "1"},
        check=False,
    )
    # ansible-core 2.19 reports task failures on stderr.
    return run.returncode, " ".join(ANSI_ESCAPE.sub("", run.stdout + run.stderr).split())


def test_systemd_is_running(host):
    state = host.run("systemctl is-system-running")
    assert state.stdout.strip() == "running", host.run("systemctl --failed --no-legend").stdout


def test_inner_docker_engine_answers(host):
    server = host.run("docker version --format '{{.Server.Version}}'")
    assert server.rc == 0, server.stderr
    assert server.stdout.strip().startswith("20.10"), server.stdout


def test_inner_docker_has_the_nvidia_runtime(host):
    runtimes = host.run("docker info --format '{{json .Runtimes}}'")
    assert runtimes.rc == 0, runtimes.stderr
    assert json.loads(runtimes.stdout)["nvidia"] == {"path": "nvidia-container-runtime"}


def test_standin_lists_one_gb10(host):
    listing = host.run("nvidia-smi -L")
    assert listing.rc == 0, listing.stderr
    lines = listing.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("GPU 0: NVIDIA GB10 (UUID: GPU-")


def test_gb10_facts_report_the_gpu_docker_memory_and_disk(host):
    facts = host.ansible("sparkinfer.cluster.gb10_facts", "model_path=/opt/sparkinfer/models/qwen3", check=False)["ansible_facts"]["sparkinfer_gb10"]
    assert [gpu["name"] for gpu in facts["gpus"]] == ["NVIDIA GB10"]
    assert facts["gpus"][0]["compute_cap"] == "12.1"
    assert facts["driver_branch"] == "580"
    assert facts["cuda_version"] == "13.0"
    # The lab's kernel and boot options, read as on a Spark; no NVIDIA kernel module is loaded in the lab.
    assert facts["kernel_release"] == host.run("uname -r").stdout.strip()
    assert facts["kernel_cmdline"] == host.file("/proc/cmdline").content_string.strip()
    assert facts["kernel_module"] is None
    assert facts["kernel_module_error"].startswith("cannot read /proc/driver/nvidia/version: No such file or directory")
    assert facts["unified_memory"] is True
    meminfo_total_kib = int(host.run("awk '/^MemTotal:/ {print $2}' /proc/meminfo").stdout)
    assert facts["memory_total_kib"] == meminfo_total_kib
    assert 0 < facts["memory_available_kib"] <= meminfo_total_kib
    assert facts["docker_error"] is None
    assert facts["docker_version"].startswith("20.10")
    assert facts["docker_nvidia_runtime"] is True
    assert facts["docker_nvidia_runtime_path"] == "nvidia-container-runtime"
    assert facts["docker_default_runtime"] == "runc"
    assert facts["docker_root_dir"] == "/var/lib/docker"
    assert facts["docker_image_store"] == "classic"
    # The model directory exists after the role; the sub-directory asked for does not.
    assert facts["disk_path_checked"] == MODEL_DIR
    df_kib = host.run(f"df -Pk {MODEL_DIR} | awk 'NR==2 {{print $2, $4}}'").stdout.split()
    assert facts["disk_total_bytes"] == int(df_kib[0]) * 1024
    assert abs(facts["disk_free_bytes"] - int(df_kib[1]) * 1024) < 2 * 1024**3


def test_deploy_user_is_in_the_docker_group(host):
    assert "docker" in host.user(DEPLOY_USER).groups
    # A fresh login of the deploy user reaches the Docker socket without sudo.
    info = host.run(f"su - {DEPLOY_USER} -c \"docker info --format '{{{{.ServerVersion}}}}'\"")
    assert info.rc == 0, info.stderr
    assert info.stdout.strip().startswith("20.10")


@pytest.mark.parametrize("path", [MODEL_DIR, *CACHE_DIRS])
def test_model_and_cache_directories_belong_to_the_deploy_user(host, path):
    directory = host.file(path)
    assert directory.is_directory
    assert directory.user == DEPLOY_USER
    assert directory.group == host.user(DEPLOY_USER).group
    assert directory.mode == 0o755


def test_sysctls_are_persisted_and_live(host):
    persisted = host.file(SYSCTL_FILE)
    assert persisted.is_file
    lines = [line for line in persisted.content_string.splitlines() if line and not line.startswith("#")]
    assert lines == [f"{name}={value}" for name, value in SYSCTLS.items()]
    for name, value in SYSCTLS.items():
        live = host.run(f"sysctl -n {name}")
        assert live.rc == 0, live.stderr
        assert live.stdout.split() == str(value).split(), name


def test_earlyoom_runs_with_the_role_arguments(host):
    service = host.service("earlyoom")
    assert service.is_enabled
    assert service.is_running, journal(host, "earlyoom")
    assert host.file("/etc/default/earlyoom").contains(f'^EARLYOOM_ARGS="{EARLYOOM_ARGS}"$')
    main_pid = host.run("systemctl show -p MainPID --value earlyoom").stdout.strip()
    cmdline = host.file(f"/proc/{main_pid}/cmdline").content_string.split("\x00")
    assert cmdline[1:] == [*EARLYOOM_ARGS.split(), ""], journal(host, "earlyoom")


DROP_TASK = re.compile(r"TASK \[sparkinfer\.cluster\.gb10_host : Page cache \| Drop the page cache before the launch\] \*+ (\w+): \[molecule-gb10-host\]")


def test_page_cache_drop_is_skipped_in_check_mode():
    # A converged node in check mode, with the drop asked for: nothing would change, the drop is skipped.
    rc, output = run_converge("--check", "-e", '{"gb10_host_drop_page_cache": true}')
    assert rc == 0, output[-2000:]
    assert [match.group(1) for match in DROP_TASK.finditer(output)] == ["skipping"], output[-3000:]
    assert re.search(r"molecule-gb10-host : ok=\d+ changed=0 ", output), output[-2000:]


def test_page_cache_drop_is_the_only_change_of_a_rerun_that_asks_for_it():
    rc, output = run_converge("-e", '{"gb10_host_drop_page_cache": true}')
    assert rc == 0, output[-2000:]
    assert [match.group(1) for match in DROP_TASK.finditer(output)] == ["changed"], output[-3000:]
    assert re.search(r"molecule-gb10-host : ok=\d+ changed=1 ", output), output[-2000:]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"gb10_host_allowed_gpus": ["NVIDIA H100 80GB HBM3"]},
            "is NVIDIA GB10 with compute capability 12.1; allowed are NVIDIA H100",
        ),
        (
            {"gb10_host_supported_driver_branches": ["590"]},
            "NVIDIA driver 580.173.02: its branch is not in gb10_host_supported_driver_branches (590). The 580 branch: the branch DGX OS ships",
        ),
        (
            {"gb10_host_required_memory_available_gib": 4096},
            "gb10_host_required_memory_available_gib asks for 4096 GiB",
        ),
        ({"gb10_host_required_disk_free_gib": 1048576}, "gb10_host_required_disk_free_gib asks for 1048576 GiB"),
        ({"gb10_host_deploy_user": "nobody-here"}, "the deploy user nobody-here does not exist"),
    ],
)
def test_role_refuses_a_host_that_does_not_fit(override, message):
    rc, output = run_converge("-e", json.dumps(override))
    assert rc == 2, output[-2000:]
    assert message.lower() in output.lower(), output[-2000:]


def docker_answers(host) -> bool:
    return host.run("timeout 10 docker info --format '{{.ServerVersion}}'").rc == 0


NO_RUNTIMES = '{"runtimes": {}}'
# docker.service allows 3 starts in 60 s (StartLimitBurst); these tests restart it more often than that.
RESTART_DOCKER = "systemctl reset-failed docker.service && systemctl restart docker"
RUNTIME_MISSING = (
    "molecule-gb10-host: Docker has no NVIDIA runtime: "
    "Docker 20.10.24+dfsg1 has no nvidia runtime (runtimes: io.containerd.runc.v2, io.containerd.runtime.v1.linux, runc)"
)
WITHOUT_RUNTIME = f"cp /etc/docker/daemon.json /etc/docker/daemon.json.away && echo '{NO_RUNTIMES}' > /etc/docker/daemon.json && {RESTART_DOCKER}"
RUNTIME_BACK = f"mv /etc/docker/daemon.json.away /etc/docker/daemon.json && {RESTART_DOCKER}"


@pytest.mark.parametrize(
    ("break_it", "mend_it", "extra", "message"),
    [
        (
            "mv /usr/bin/nvidia-smi /usr/bin/nvidia-smi.away",
            "mv /usr/bin/nvidia-smi.away /usr/bin/nvidia-smi",
            {},
            "molecule-gb10-host: no GPU visible: nvidia-smi not found: the NVIDIA driver is not installed. Fix: load the NVIDIA driver",
        ),
        (
            "systemctl stop docker.socket docker.service",
            "systemctl reset-failed docker.service && systemctl start docker.service",
            {},
            "molecule-gb10-host: Docker does not answer: /usr/bin/docker info got no answer from the Docker daemon",
        ),
        (
            f"{WITHOUT_RUNTIME} && mv /usr/bin/nvidia-ctk /usr/bin/nvidia-ctk.away",
            f"mv /usr/bin/nvidia-ctk.away /usr/bin/nvidia-ctk && {RUNTIME_BACK}",
            {},
            f"{RUNTIME_MISSING}, so containers cannot reach the GPU, and /usr/bin/nvidia-ctk (gb10_host_nvidia_ctk_path) is not an executable file.",
        ),
        (
            WITHOUT_RUNTIME,
            RUNTIME_BACK,
            {"gb10_host_configure_nvidia_runtime": False},
            f"{RUNTIME_MISSING}, so containers cannot reach the GPU, and the role may not register it (gb10_host_configure_nvidia_runtime is false).",
        ),
    ],
    ids=["no-nvidia-smi", "docker-down", "no-nvidia-runtime-no-nvidia-ctk", "no-nvidia-runtime-not-to-be-registered"],
)
def test_preflight_refuses_a_host_without_the_driver_docker_or_the_nvidia_runtime_and_changes_nothing(host, break_it, mend_it, extra, message):
    host.check_output(break_it)
    try:
        rc, output = run_converge("-e", json.dumps(extra))
    finally:
        host.check_output(mend_it)
    assert rc == 2, output[-2000:]
    assert message in output, output[-2000:]
    assert re.search(r"molecule-gb10-host : ok=\d+ changed=0 .*failed=1 ", output), output[-2000:]
    assert docker_answers(host)


NVIDIA_RUNTIME_TASK = re.compile(r"TASK \[sparkinfer\.cluster\.gb10_host : NVIDIA runtime \| ([^\]]+)\] \*+ (\w+): \[molecule-gb10-host\]")


def test_role_registers_the_nvidia_runtime_docker_lacks_with_nvidia_ctk_and_keeps_the_other_settings(host):
    # A Docker with a setting of its own and no nvidia runtime, as on a host where the toolkit was installed but
    # never configured: check mode tells the restart, changes nothing; a run registers the runtime and restarts once.
    own_settings = {"labels": ["sparkinfer-lab=own-setting"]}
    settings_only = f"echo '{json.dumps(own_settings)}' > /etc/docker/daemon.json"
    host.check_output(f"cp /etc/docker/daemon.json /etc/docker/daemon.json.away && {settings_only} && {RESTART_DOCKER}")
    try:
        rc, output = run_converge("--check")
        assert rc == 0, output[-2000:]
        assert [match.groups() for match in NVIDIA_RUNTIME_TASK.finditer(output)] == [
            ("Register the NVIDIA runtime in Docker's daemon.json with nvidia-ctk", "skipping"),
            ("Restart Docker so that it loads the runtime", "changed"),
            ("Read Docker's runtimes again", "skipping"),
            ("Assert Docker now has the nvidia runtime", "skipping"),
        ], output[-3000:]
        assert re.search(r"molecule-gb10-host : ok=\d+ changed=1 ", output), output[-2000:]
        assert json.loads(host.file("/etc/docker/daemon.json").content_string) == own_settings

        host.check_output("systemctl reset-failed docker.service")
        rc, output = run_converge()
        assert rc == 0, output[-2000:]
        assert [match.groups() for match in NVIDIA_RUNTIME_TASK.finditer(output)] == [
            ("Register the NVIDIA runtime in Docker's daemon.json with nvidia-ctk", "changed"),
            ("Restart Docker so that it loads the runtime", "changed"),
            ("Read Docker's runtimes again", "ok"),
            ("Assert Docker now has the nvidia runtime", "ok"),
        ], output[-3000:]
        assert re.search(r"molecule-gb10-host : ok=\d+ changed=2 ", output), output[-2000:]
        assert json.loads(host.file("/etc/docker/daemon.json").content_string) == {
            **own_settings,
            "runtimes": {"nvidia": {"args": [], "path": "nvidia-container-runtime"}},
        }
        runtimes = json.loads(host.check_output("docker info --format '{{json .Runtimes}}'"))
        assert runtimes["nvidia"] == {"path": "nvidia-container-runtime"}
        assert json.loads(host.check_output("docker info --format '{{json .Labels}}'")) == own_settings["labels"]
    finally:
        host.check_output(RUNTIME_BACK)
    assert docker_answers(host)
