"""gb10_facts end to end in-process, fed real GB10 and Docker outputs (fixtures/gb10/SOURCES.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_info import DOCKER_INFO_ARGS
from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import GPU_QUERY_FIELDS, GPU_QUERY_FORMAT
from ansible_collections.sparkinfer.cluster.plugins.modules import gb10_facts

from .module_harness import FakeCommands, ModuleFail, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "gb10"
TIMEOUT = "/usr/bin/timeout"
SMI = "/usr/bin/nvidia-smi"
DOCKER = "/usr/bin/docker"
MEMINFO = str(FIXTURES / "meminfo-debian12-x86_64-lab-host.txt")
NVRM_OPEN = str(FIXTURES / "nvrm-version-580.142-open-aarch64-gb10.txt")
CMDLINE = str(FIXTURES / "cmdline-7.0.0-30-generic-arm64-kho-off.txt")
PROC_STAT = str(FIXTURES / "proc-stat-lab-node-debian12.txt")
INIT_STAT = str(FIXTURES / "pid1-stat-systemd-lab-node-debian12.txt")


def bounded(*argv: str, seconds: int = 60) -> tuple[str, ...]:
    """argv as the module runs it, under timeout(1)."""
    return (TIMEOUT, "--kill-after=10", str(seconds), *argv)


QUERY = bounded(SMI, f"--query-gpu={','.join(GPU_QUERY_FIELDS)}", f"--format={GPU_QUERY_FORMAT}")
# A real GB10's answer to exactly that query (driver 580.142); the plain table is another GB10's (driver 580.173.02).
QUERY_ANSWER = "query-gb10-facts-fields-noheader-nounits-580.142.txt"
BANNER = bounded(SMI)
DOCKER_INFO = bounded(DOCKER, *DOCKER_INFO_ARGS)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def real_gb10(docker_info: str = "docker-info-20.10.24-lab-node-nvidia-runtime.json") -> FakeCommands:
    return FakeCommands(
        {
            QUERY: (0, fixture(QUERY_ANSWER), ""),
            BANNER: (0, fixture("nvidia-smi-580.173.02-plain.txt"), ""),
            DOCKER_INFO: (0, fixture(docker_info), ""),
        }
    )


@pytest.fixture
def args(tmp_path) -> dict:
    return {
        "meminfo_path": MEMINFO,
        "model_path": str(tmp_path / "models"),
        "nvrm_version_path": NVRM_OPEN,
        "cmdline_path": CMDLINE,
        "proc_stat_path": PROC_STAT,
        "init_stat_path": INIT_STAT,
    }


def gb10_facts_of(args: dict, commands: FakeCommands, **kwargs) -> dict:
    return run_module(gb10_facts.main, args, commands, **kwargs)["ansible_facts"]["sparkinfer_gb10"]


@pytest.mark.parametrize("check_mode", [False, True])
def test_facts_of_a_gb10(args, tmp_path, check_mode):
    commands = real_gb10()
    result = run_module(gb10_facts.main, {**args, "_ansible_check_mode": check_mode}, commands)
    facts = result["ansible_facts"]["sparkinfer_gb10"]
    assert result["changed"] is False
    assert facts["gpus"] == [
        {
            "index": 0,
            "name": "NVIDIA GB10",
            "pci_bus_id": "0000000F:01:00.0",
            "driver_version": "580.142",
            "compute_cap": "12.1",
            "temperature_c": 52,
            "pstate": "P0",
            "memory_total_mib": None,
        }
    ]
    # The versions come from the plain table's banner.
    assert (facts["driver_version"], facts["driver_branch"], facts["cuda_version"]) == ("580.173.02", "580", "13.0")
    assert facts["unified_memory"] is True
    memory = [facts[f"memory_{name}_kib"] for name in ("total", "free", "available", "cached")]
    assert memory == [24683584, 23015436, 24113780, 1068752]
    # That meminfo's kernel has no CMA area: the figures are unread, not zero.
    assert (facts["memory_cma_total_kib"], facts["memory_cma_free_kib"]) == (None, None)
    assert (facts["kernel_module"], facts["kernel_module_error"]) == ("open", None)
    assert facts["kernel_release"] == os.uname().release
    assert facts["kernel_cmdline"] == (
        "BOOT_IMAGE=/vmlinuz-7.0.0-30-generic root=PARTUUID=f257fc73-df70-4995-8eb6-953e15761105 ro console=tty1 console=ttyAMA0 kho=off panic=-1"
    )
    # The lab node's init started at 08:20:48.26 UTC (its container's StartedAt: 08:20:48.918461961Z).
    assert facts["boot_time"] == pytest.approx(1796631648.26)
    assert facts["nvidia_smi_error"] is None
    assert commands.calls == [QUERY, BANNER, DOCKER_INFO]
    assert {key: value for key, value in facts.items() if key.startswith("docker_")} == {
        "docker_version": "20.10.24+dfsg1",
        "docker_runtimes": ["io.containerd.runc.v2", "io.containerd.runtime.v1.linux", "nvidia", "runc"],
        "docker_nvidia_runtime": True,
        "docker_nvidia_runtime_path": "nvidia-container-runtime",
        "docker_default_runtime": "runc",
        "docker_cgroup_driver": "cgroupfs",
        "docker_storage_driver": "vfs",
        "docker_image_store": "classic",
        "docker_root_dir": "/var/lib/docker",
        "docker_error": None,
    }
    # The model directory does not exist yet: its nearest existing ancestor is measured.
    stat = os.statvfs(tmp_path)
    assert facts["disk_path_checked"] == str(tmp_path)
    assert facts["disk_total_bytes"] == stat.f_blocks * stat.f_frsize
    assert 0 < facts["disk_free_bytes"] <= facts["disk_total_bytes"]


def test_engine_without_the_nvidia_runtime(args):
    facts = gb10_facts_of(args, real_gb10("docker-info-client-28.2.2-server-20.10.24-lab-host.json"))
    assert facts["docker_error"] is None
    assert facts["docker_nvidia_runtime"] is False
    assert facts["docker_nvidia_runtime_path"] is None
    assert facts["docker_storage_driver"] == "overlay2"


def test_engine_with_the_containerd_image_store(args):
    facts = gb10_facts_of(args, real_gb10("docker-info-28.5.2-containerd-store.json"))
    assert (facts["docker_version"], facts["docker_storage_driver"], facts["docker_image_store"]) == ("28.5.2+dfsg4", "overlayfs", "containerd")


def test_existing_model_directory_is_measured_itself(args, tmp_path):
    (tmp_path / "models").mkdir()
    assert gb10_facts_of(args, real_gb10())["disk_path_checked"] == str(tmp_path / "models")


def test_missing_nvidia_smi_is_reported_not_raised(args):
    commands = FakeCommands({DOCKER_INFO: (0, fixture("docker-info-20.10.24-lab-node-nvidia-runtime.json"), "")})
    facts = gb10_facts_of(args, commands, bin_paths={"nvidia-smi": None})
    assert facts["gpus"] == []
    assert facts["unified_memory"] is False
    assert facts["nvidia_smi_error"] == "nvidia-smi not found: the NVIDIA driver is not installed"
    assert facts["docker_nvidia_runtime"] is True


def test_failing_query_is_reported_with_its_output(args):
    commands = real_gb10()
    commands.answers[QUERY] = (9, "", "NVIDIA-SMI has failed because it couldn't communicate with the driver")
    facts = gb10_facts_of(args, commands)
    assert facts["gpus"] == []
    assert facts["nvidia_smi_error"].endswith("rc=9: NVIDIA-SMI has failed because it couldn't communicate with the driver")


def test_plain_nvidia_smi_crashing_after_its_banner_keeps_the_queried_gpus_and_the_printed_versions(args):
    commands = real_gb10()
    # Plain nvidia-smi under WSL printed its banner and table header, then died of SIGSEGV (exit 139).
    commands.answers[BANNER] = (139, fixture("nvidia-smi-555.42.03-plain-wsl-segfault-stdout.txt"), "")
    facts = gb10_facts_of(args, commands)
    assert [gpu["name"] for gpu in facts["gpus"]] == ["NVIDIA GB10"]
    assert (facts["driver_version"], facts["driver_branch"], facts["cuda_version"]) == ("555.85", "555", "12.5")
    assert facts["nvidia_smi_error"] == f"{SMI} failed with rc=139 after printing its banner: no error printed"


def test_plain_nvidia_smi_crashing_before_its_banner_keeps_the_queried_gpus_and_their_driver(args):
    commands = real_gb10()
    commands.answers[BANNER] = (139, "", "")
    facts = gb10_facts_of(args, commands)
    assert [gpu["name"] for gpu in facts["gpus"]] == ["NVIDIA GB10"]
    assert (facts["driver_version"], facts["driver_branch"], facts["cuda_version"]) == ("580.142", "580", None)
    assert facts["nvidia_smi_error"] == f"{SMI} failed with rc=139: it printed nothing"


def test_missing_docker_is_reported_not_raised(args):
    commands = real_gb10()
    facts = gb10_facts_of(args, commands, bin_paths={"docker": None})
    assert facts["docker_error"] == "docker not found: the Docker engine is not installed"
    assert (facts["docker_version"], facts["docker_runtimes"], facts["docker_nvidia_runtime"]) == (None, [], False)
    assert DOCKER_INFO not in commands.calls


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        # docker.io 20.10 exits 0 and puts the reason in ServerErrors.
        (
            (0, fixture("docker-info-20.10.24-daemon-down.json"), ""),
            "(rc=0): Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
        ),
        (
            (0, fixture("docker-info-20.10.24-permission-denied.json"), ""),
            "(rc=0): permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock",
        ),
        # docker 28 exits 1, prints its JSON with empty server fields and the reason on stderr.
        (
            (1, fixture("docker-info-28.2.2-daemon-down.json"), fixture("docker-info-28.2.2-daemon-down.stderr.txt")),
            "(rc=1): Cannot connect to the Docker daemon at unix:///tmp/gb10cap/nonexistent.sock. Is the docker daemon running?",
        ),
        # A failing client that printed no JSON at all.
        ((1, "", fixture("docker-info-28.2.2-daemon-down.stderr.txt")), "(rc=1): Cannot connect to the Docker daemon at unix:///tmp/gb10cap"),
        ((1, "", ""), "(rc=1): no reason printed"),
    ],
)
def test_docker_daemon_not_answering_is_reported_not_raised(args, answer, reason):
    commands = real_gb10()
    commands.answers[DOCKER_INFO] = answer
    facts = gb10_facts_of(args, commands)
    assert facts["docker_error"].startswith(f"{DOCKER} info got no answer from the Docker daemon {reason}")
    assert (facts["docker_version"], facts["docker_runtimes"], facts["docker_nvidia_runtime"]) == (None, [], False)
    assert facts["gpus"]  # the GPU facts are still there


def test_unparsable_output_fails_with_the_reason(args):
    commands = real_gb10()
    commands.answers[BANNER] = (0, fixture(QUERY_ANSWER), "")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, args, commands)
    assert "cannot parse the host's GPU, Docker, memory or disk facts: nvidia-smi output has no" in failure.value.result["msg"]


def test_docker_succeeding_without_its_document_fails_with_the_reason(args):
    commands = real_gb10()
    commands.answers[DOCKER_INFO] = (0, fixture("docker-info-28.2.2-daemon-down.stderr.txt"), "")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, args, commands)
    assert "Docker, memory or disk facts: docker info printed no JSON document: 'Cannot connect" in failure.value.result["msg"]


def test_unreadable_meminfo_fails_naming_the_file(args, tmp_path):
    missing = str(tmp_path / "meminfo")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, {**args, "meminfo_path": missing}, real_gb10())
    assert failure.value.result["msg"].startswith(f"cannot read {missing}:")


def test_relative_model_path_fails(args):
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, {**args, "model_path": "models"}, real_gb10())
    assert failure.value.result["msg"] == "model_path must be an absolute path, not 'models'"


def test_unmeasurable_disk_fails_naming_the_path(args, tmp_path, monkeypatch):
    def refuse(path):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(gb10_facts.os, "statvfs", refuse)
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, args, real_gb10())
    assert failure.value.result["msg"].startswith(f"cannot measure the free space at {tmp_path}: ")


# --- timeouts ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("hung", ["query", "banner"])
def test_an_nvidia_smi_that_hangs_fails_naming_it_and_the_fix(args, hung):
    commands = real_gb10()
    # timeout(1) exits 124 when it stopped the command.
    stopped = QUERY if hung == "query" else BANNER
    commands.answers[stopped] = (124, "", "")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, args, commands)
    message = failure.value.result["msg"]
    assert message.startswith(f"`{' '.join(stopped[3:])}` did not finish within 60 s and was stopped: the GPU or its driver is wedged")
    assert "reboot the node" in message
    assert DOCKER_INFO not in commands.calls


def test_an_nvidia_smi_killed_after_its_grace_time_counts_as_hung(args):
    commands = real_gb10()
    commands.answers[QUERY] = (137, "", "")
    ticks = iter([0.0, 71.0])  # 71 s: past the 60 s and timeout(1)'s 10 s of grace before SIGKILL
    with pytest.raises(ModuleFail) as failure:
        run_module(lambda: gb10_facts.main(clock=lambda: next(ticks)), args, commands)
    assert "did not finish within 60 s" in failure.value.result["msg"]


def test_a_docker_info_that_hangs_is_a_docker_error_naming_it(args):
    commands = real_gb10()
    commands.answers[DOCKER_INFO] = (124, "", "")
    facts = gb10_facts_of(args, commands)
    assert facts["docker_error"] == (
        f"`{DOCKER} info --format {{{{json .}}}}` did not finish within 60 s and was stopped: the Docker daemon does not answer: "
        "check `systemctl status docker` and `journalctl -u docker`, and restart it"
    )
    assert facts["gpus"]


def test_the_command_timeout_bounds_every_command(args):
    answers = real_gb10().answers
    commands = FakeCommands({(*argv[:2], "5", *argv[3:]): answer for argv, answer in answers.items()})
    facts = gb10_facts_of({**args, "command_timeout": 5}, commands)
    assert facts["nvidia_smi_error"] is None
    assert [call[:3] for call in commands.calls] == [(TIMEOUT, "--kill-after=10", "5")] * 3


def test_the_command_timeout_must_be_positive(args):
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, {**args, "command_timeout": 0}, real_gb10())
    assert failure.value.result["msg"] == "command_timeout must be a positive number of seconds, not 0"


# --- a meminfo that is not ASCII ----------------------------------------------------------------------------


def test_a_meminfo_with_bytes_that_are_not_ascii_still_parses(args, tmp_path):
    meminfo = tmp_path / "meminfo"
    # Synthetic: the real lab meminfo with a line of UTF-8 and a stray Latin-1 byte added.
    meminfo.write_bytes(Path(MEMINFO).read_bytes() + "Gr\u00f6\u00dfe:   12 kB\n".encode() + b"\xff\n")
    facts = gb10_facts_of({**args, "meminfo_path": str(meminfo)}, real_gb10())
    assert facts["memory_total_kib"] == 24683584


def test_a_meminfo_whose_figures_are_not_ascii_digits_fails_naming_the_file(args, tmp_path):
    meminfo = tmp_path / "meminfo"
    # Synthetic: MemTotal in Arabic-Indic digits, which int() would read as 123.
    lines = [line for line in Path(MEMINFO).read_text(encoding="ascii").splitlines() if not line.startswith("MemTotal")]
    meminfo.write_text("\n".join(["MemTotal:  \u0661\u0662\u0663 kB", *lines]) + "\n", encoding="utf-8")
    with pytest.raises(ModuleFail) as failure:
        run_module(gb10_facts.main, {**args, "meminfo_path": str(meminfo)}, real_gb10())
    assert failure.value.result["msg"] == f"cannot read the memory figures of {meminfo}: /proc/meminfo has no MemTotal line"


def test_the_proprietary_kernel_modules_are_named(args):
    facts = gb10_facts_of({**args, "nvrm_version_path": str(FIXTURES / "nvrm-version-384.98-proprietary-x86_64.txt")}, real_gb10())
    assert (facts["kernel_module"], facts["kernel_module_error"]) == ("proprietary", None)


def test_no_nvidia_module_leaves_the_flavour_unread_and_says_why(args, tmp_path):
    missing = str(tmp_path / "no-driver" / "version")
    facts = gb10_facts_of({**args, "nvrm_version_path": missing, "cmdline_path": str(tmp_path / "none")}, real_gb10())
    assert facts["kernel_module"] is None
    assert facts["kernel_module_error"] == f"cannot read {missing}: No such file or directory (no NVIDIA kernel module is loaded)"
    assert facts["kernel_cmdline"] is None


def test_a_boot_time_that_cannot_be_read_is_null(args, tmp_path):
    assert gb10_facts_of({**args, "init_stat_path": str(tmp_path / "none")}, real_gb10())["boot_time"] is None
    assert gb10_facts_of({**args, "proc_stat_path": MEMINFO}, real_gb10())["boot_time"] is None


def test_a_version_file_of_another_shape_is_said_not_raised(args):
    facts = gb10_facts_of({**args, "nvrm_version_path": MEMINFO}, real_gb10())
    assert facts["kernel_module"] is None
    assert "has no 'NVRM version: NVIDIA UNIX ... Kernel Module VERSION' line" in facts["kernel_module_error"]
