#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gb10_facts
short_description: Gather the GPU, driver, Docker, unified-memory and disk facts of a DGX Spark (GB10) host
version_added: 0.1.0
description:
  - Queries C(nvidia-smi) for every GPU (name, compute capability, driver, PCI bus id, memory fields)
    and for the CUDA version its banner prints, and reads the host's memory from C(/proc/meminfo).
  - On a GB10 the memory fields of C(nvidia-smi) read C([N/A]) because the GPU shares the host's
    unified memory; C(MemAvailable) from C(/proc/meminfo) is then the memory figure to plan with.
  - Asks the Docker engine for its version, its runtimes (whether the NVIDIA container runtime,
    C(nvidia), is registered), its default runtime, cgroup driver, storage driver and root
    directory, through C(docker info --format '{{json .}}').
  - Measures the free space of the filesystem that holds (or will hold) O(model_path), the path
    itself when it exists, else its nearest existing ancestor.
  - Returns the facts under C(ansible_facts['sparkinfer_gb10']).
  - When C(nvidia-smi) is not installed or its GPU query fails, C(gpus) is empty and C(nvidia_smi_error) says why (an
    C(nvidia-smi) that hangs past O(command_timeout) fails the module instead); when only plain C(nvidia-smi) fails
    after the query read the GPUs, they are kept and C(nvidia_smi_error) says why;
    when C(docker) is not installed or its daemon does not answer, the Docker facts are empty and
    C(docker_error) says why (also when C(docker info) hangs past O(command_timeout)); so that a play can assert
    with its own message.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
  - sparkinfer.cluster._attributes.FACTS
  - sparkinfer.cluster._attributes.FACTS_MODULE
options:
  nvidia_smi_path:
    description: The C(nvidia-smi) executable, a name looked up on the PATH or an absolute path.
    type: str
    default: nvidia-smi
  meminfo_path:
    description: The file to read memory figures from.
    type: path
    default: /proc/meminfo
  nvrm_version_path:
    description:
      - The file the loaded NVIDIA kernel module describes itself in; its first line says whether NVIDIA's open kernel
        modules or the proprietary ones are loaded (C(kernel_module)).
    type: path
    default: /proc/driver/nvidia/version
  cmdline_path:
    description: The file the kernel's boot options are read from (C(kernel_cmdline)).
    type: path
    default: /proc/cmdline
  proc_stat_path:
    description: The kernel's statistics file, whose C(btime) line is when the kernel booted (C(boot_time)).
    type: path
    default: /proc/stat
  init_stat_path:
    description: The status file of the node's init, PID 1, whose start time after the kernel's boot gives C(boot_time).
    type: path
    default: /proc/1/stat
  docker_path:
    description: The C(docker) client executable, a name looked up on the PATH or an absolute path.
    type: str
    default: docker
  model_path:
    description:
      - The directory the model weights live in (or will live in). Its free space, or that of its
        nearest existing ancestor, is returned as C(disk_free_bytes).
      - Must be an absolute path.
    type: path
    default: /opt/sparkinfer/models
  command_timeout:
    description:
      - Seconds each command (C(nvidia-smi), C(docker info)) may run; it runs under C(timeout(1)) from coreutils,
        which stops its whole process group then.
      - An C(nvidia-smi) that does not finish in time (a wedged GPU or driver) fails the module, naming the command
        and what to check. A C(docker info) that does not finish in time is a daemon that does not answer,
        reported in C(docker_error).
    type: int
    default: 60
notes:
  - Commands run with C(LC_ALL=C) so that their output parses the same everywhere.
  - "An C(nvidia-smi) stuck in the kernel (uninterruptible sleep on a hung GPU) cannot be killed, not even by
    C(timeout(1)): the node then needs a reboot."
  - C(docker info) needs access to the Docker socket; run the module as root (C(become)) or as a
    member of the C(docker) group, or C(docker_error) reports the permission error.
"""

EXAMPLES = r"""
- name: Gather the GB10 facts
  sparkinfer.cluster.gb10_facts:

- name: Fail unless the host has a GB10
  ansible.builtin.assert:
    that:
      - ansible_facts['sparkinfer_gb10']['gpus'] | map(attribute='name') | list == ['NVIDIA GB10']

- name: Gather the facts, measuring the disk that will hold the models
  sparkinfer.cluster.gb10_facts:
    model_path: /srv/models

- name: Fail unless Docker can start GPU containers and 200 GiB are free for the weights
  ansible.builtin.assert:
    that:
      - ansible_facts['sparkinfer_gb10']['docker_error'] is none
      - ansible_facts['sparkinfer_gb10']['docker_nvidia_runtime']
      - ansible_facts['sparkinfer_gb10']['disk_free_bytes'] >= 200 * 1024 ** 3
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to C(ansible_facts).
  returned: always
  type: dict
  contains:
    sparkinfer_gb10:
      description: The host's GPU and memory facts.
      returned: always
      type: dict
      contains:
        gpus:
          description: One entry per GPU, in C(nvidia-smi) index order.
          type: list
          elements: dict
          returned: always
          sample:
            - index: 0
              name: NVIDIA GB10
              pci_bus_id: 0000000F:01:00.0
              driver_version: "580.142"
              compute_cap: "12.1"
              temperature_c: 52
              pstate: P0
              memory_total_mib: null
        driver_version:
          description: The NVIDIA driver version, or null without a working C(nvidia-smi).
          type: str
          returned: always
          sample: 580.95.05
        driver_branch:
          description: The driver's major version.
          type: str
          returned: always
          sample: "580"
        cuda_version:
          description: The CUDA version the driver supports, as the C(nvidia-smi) banner prints it.
          type: str
          returned: always
          sample: "13.0"
        nvidia_smi_error:
          description:
            - Why no GPU could be read (missing executable, failing query), or why plain C(nvidia-smi) failed after the
              query read the GPUs (they are kept, and the versions come from the banner it printed or from the query),
              or null.
          type: str
          returned: always
          sample: null
        unified_memory:
          description: True when every GPU reports no memory of its own (GB10 shares host memory).
          type: bool
          returned: always
          sample: true
        memory_total_kib:
          description: C(MemTotal) from C(/proc/meminfo), in KiB.
          type: int
          returned: always
          sample: 127601452
        memory_available_kib:
          description: C(MemAvailable) from C(/proc/meminfo), in KiB.
          type: int
          returned: always
          sample: 119040000
        memory_free_kib:
          description:
            - C(MemFree) from C(/proc/meminfo), in KiB. On GB10 vLLM's start-up check sees free, not available, memory
              (vllm-project/vllm#48140), so a page cache full from a model copy or C(docker load) counts against it
              until it is dropped.
          type: int
          returned: always
          sample: 98214000
        memory_cached_kib:
          description: C(Cached) from C(/proc/meminfo) (the page cache), in KiB.
          type: int
          returned: always
          sample: 20310000
        memory_cma_total_kib:
          description: C(CmaTotal) from C(/proc/meminfo) (the contiguous memory area) in KiB, or null when the kernel has none.
          type: int
          returned: always
          sample: 0
        memory_cma_free_kib:
          description: C(CmaFree) from C(/proc/meminfo) in KiB, or null when the kernel has none.
          type: int
          returned: always
          sample: 0
        architecture:
          description: The host's CPU architecture as C(uname -m) prints it.
          type: str
          returned: always
          sample: aarch64
        kernel_release:
          description: The running kernel's release, as C(uname -r) prints it.
          type: str
          returned: always
          sample: 6.17.0-1014-nvidia
        kernel_cmdline:
          description: The kernel's boot options (O(cmdline_path)), or null when it cannot be read.
          type: str
          returned: always
          sample: BOOT_IMAGE=/boot/vmlinuz-6.17.0-1014-nvidia root=UUID=... ro quiet splash
        boot_time:
          description:
            - When the node booted as its services see it (its init, PID 1, started), in seconds since the epoch; null
              when O(proc_stat_path) or O(init_stat_path) cannot be read. The doctor compares it with when the vLLM
              ranks started, to say that a node rebooted under a server.
          type: float
          returned: always
          sample: 1796631076.25
        kernel_module:
          description:
            - C(open) when NVIDIA's open kernel modules are loaded, C(proprietary) for the closed ones (read from
              O(nvrm_version_path)); null when no NVIDIA module is loaded or the file says neither (C(kernel_module_error)).
          type: str
          returned: always
          sample: open
        kernel_module_error:
          description: Why C(kernel_module) is null, or null.
          type: str
          returned: always
          sample: null
        docker_version:
          description: The Docker engine's version (C(ServerVersion)), or null when no daemon answered.
          type: str
          returned: always
          sample: 28.3.2
        docker_runtimes:
          description: The names of the OCI runtimes the Docker engine has registered, sorted.
          type: list
          elements: str
          returned: always
          sample: [io.containerd.runc.v2, nvidia, runc]
        docker_nvidia_runtime:
          description:
            - True when the engine has the NVIDIA container runtime registered as C(nvidia), as
              C(nvidia-ctk runtime configure --runtime=docker) does.
          type: bool
          returned: always
          sample: true
        docker_nvidia_runtime_path:
          description: The executable the C(nvidia) runtime runs, or null without that runtime.
          type: str
          returned: always
          sample: nvidia-container-runtime
        docker_default_runtime:
          description: The engine's default runtime (C(DefaultRuntime)), or null when no daemon answered.
          type: str
          returned: always
          sample: runc
        docker_cgroup_driver:
          description: The engine's cgroup driver (C(CgroupDriver)), such as C(systemd) or C(cgroupfs).
          type: str
          returned: always
          sample: systemd
        docker_storage_driver:
          description: The engine's storage driver (C(Driver)), such as C(overlay2).
          type: str
          returned: always
          sample: overlay2
        docker_image_store:
          description:
            - Where the engine keeps images, C(containerd) (its image store, C(DriverStatus) C(driver-type)
              C(io.containerd.snapshotter.v1); Docker Desktop's and Docker 29's default) or C(classic) (a graph driver such as
              C(overlay2)); null when no daemon answered.
            - On the containerd store an image's C(Id) is its index's or manifest's digest, which C(docker save --platform)
              changes; the vllm_image role compares images by a fingerprint instead.
          type: str
          returned: always
          sample: classic
        docker_root_dir:
          description: The engine's data directory (C(DockerRootDir)), where images are stored.
          type: str
          returned: always
          sample: /var/lib/docker
        docker_error:
          description:
            - Why no Docker facts could be read (client not installed, daemon not running or not
              answering within O(command_timeout), no permission on its socket), or null.
          type: str
          returned: always
          sample: null
        disk_path_checked:
          description: The path whose filesystem was measured, O(model_path) or its nearest existing ancestor.
          type: str
          returned: always
          sample: /opt
        disk_free_bytes:
          description: Bytes available to unprivileged users on the filesystem of C(disk_path_checked).
          type: int
          returned: always
          sample: 3630286192640
        disk_total_bytes:
          description: Size in bytes of the filesystem of C(disk_path_checked).
          type: int
          returned: always
          sample: 3936819273728
"""

import os
import platform
import time
from collections.abc import Callable

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import run_bounded, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_info import (
    DOCKER_INFO_ARGS,
    DockerInfo,
    DockerInfoParseError,
    parse_docker_info,
)
from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import (
    GPU_QUERY_FIELDS,
    GPU_QUERY_FORMAT,
    Gb10ParseError,
    disk_space,
    driver_branch,
    nearest_existing_path,
    parse_gpu_query,
    parse_meminfo,
    parse_nvrm_version,
    parse_smi_banner,
    process_start_time,
)

_WEDGED_GPU_FIX = (
    "the GPU or its driver is wedged: run `nvidia-smi` by hand on the node, look for NVRM Xid errors in `dmesg`, "
    "and reboot the node when `nvidia-smi` hangs there too"
)
_SILENT_DAEMON_FIX = "the Docker daemon does not answer: check `systemctl status docker` and `journalctl -u docker`, and restart it"


class Gb10Facts:
    def __init__(self, module: AnsibleModule, clock: Callable[[], float]) -> None:
        self.module = module
        self.clock = clock
        self.timeout = module.params["command_timeout"]

    def _run(self, executable: str, *args: str) -> tuple[int, str, str, bool]:
        """Run a command under timeout(1): its rc, stdout, stderr, and whether the timeout stopped it."""
        wrapper = self.module.get_bin_path("timeout", required=True)
        return run_bounded(self.module.run_command, wrapper, self.timeout, [executable, *args], self.clock, environ_update={"LC_ALL": "C"})

    def _run_smi(self, smi: str, *args: str) -> tuple[int, str, str]:
        """Run nvidia-smi; one that does not finish in time fails the module (nothing else will work on that GPU)."""
        rc, out, err, stopped = self._run(smi, *args)
        if stopped:
            self.module.fail_json(msg=f"{timeout_message([smi, *args], self.timeout)}: {_WEDGED_GPU_FIX}", rc=rc, stdout=out, stderr=err)
        return rc, out, err

    def gpu_facts(self) -> dict:
        facts: dict = {"gpus": [], "driver_version": None, "driver_branch": None, "cuda_version": None}
        smi = self.module.get_bin_path(self.module.params["nvidia_smi_path"])
        if smi is None:
            facts["nvidia_smi_error"] = f"{self.module.params['nvidia_smi_path']} not found: the NVIDIA driver is not installed"
            return facts
        rc, out, err = self._run_smi(smi, f"--query-gpu={','.join(GPU_QUERY_FIELDS)}", f"--format={GPU_QUERY_FORMAT}")
        if rc != 0:
            facts["nvidia_smi_error"] = f"{smi} --query-gpu failed with rc={rc}: {(err or out).strip()}"
            return facts
        gpus = parse_gpu_query(out)
        facts["gpus"] = [gpu.as_dict() for gpu in gpus]
        rc, banner_out, err = self._run_smi(smi)
        if rc != 0:
            # Plain nvidia-smi can crash after its banner (a SIGSEGV in NVML, exit 139, under WSL) while the query
            # worked: keep the GPUs it read, the versions from the banner printed before the crash, else the query's driver.
            try:
                banner = parse_smi_banner(banner_out)
            except Gb10ParseError:
                facts["nvidia_smi_error"] = f"{smi} failed with rc={rc}: {(err or banner_out).strip() or 'it printed nothing'}"
                driver = gpus[0].driver_version if gpus else None
                facts.update(driver_version=driver, driver_branch=driver_branch(driver))
                return facts
            facts["nvidia_smi_error"] = f"{smi} failed with rc={rc} after printing its banner: {err.strip() or 'no error printed'}"
        else:
            banner = parse_smi_banner(banner_out)
            facts["nvidia_smi_error"] = None
        facts.update(
            driver_version=banner.driver_version,
            driver_branch=driver_branch(banner.driver_version),
            cuda_version=banner.cuda_version,
        )
        return facts

    def memory_facts(self) -> dict:
        path = self.module.params["meminfo_path"]
        try:
            # /proc/meminfo is ASCII; a stray byte of another file must not stop the lines that do parse.
            with open(path, encoding="ascii", errors="replace") as handle:
                meminfo = parse_meminfo(handle.read())
        except OSError as exc:
            self.module.fail_json(msg=f"cannot read {path}: {exc}")
        except Gb10ParseError as exc:
            self.module.fail_json(msg=f"cannot read the memory figures of {path}: {exc}")
        return {
            "memory_total_kib": meminfo["MemTotal"],
            "memory_available_kib": meminfo["MemAvailable"],
            "memory_free_kib": meminfo["MemFree"],
            "memory_cached_kib": meminfo["Cached"],
            # The contiguous memory area: kernels with KHO (7.0) report CmaFree above CmaTotal (NVIDIA/NV-Kernels#590).
            "memory_cma_total_kib": meminfo.get("CmaTotal"),
            "memory_cma_free_kib": meminfo.get("CmaFree"),
        }

    def kernel_facts(self) -> dict:
        """The kernel release, its boot options and which NVIDIA kernel modules are loaded: what the platform table
        (driver flavour, kernel 7.0's boot option) judges. A file that cannot be read leaves its fact unread (None)."""
        facts: dict = {"kernel_release": os.uname().release, "kernel_cmdline": None, "kernel_module": None, "kernel_module_error": None}
        facts["boot_time"] = self.boot_time()
        try:
            with open(self.module.params["cmdline_path"], encoding="utf-8", errors="replace") as handle:
                facts["kernel_cmdline"] = handle.read().strip()
        except OSError:
            pass
        path = self.module.params["nvrm_version_path"]
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                facts["kernel_module"], _version = parse_nvrm_version(handle.read())
        except OSError as exc:
            facts["kernel_module_error"] = f"cannot read {path}: {exc.strerror or exc} (no NVIDIA kernel module is loaded)"
        except Gb10ParseError as exc:
            facts["kernel_module_error"] = str(exc)
        return facts

    def boot_time(self) -> float | None:
        try:
            with open(self.module.params["proc_stat_path"], encoding="utf-8") as stat, open(self.module.params["init_stat_path"], encoding="utf-8") as init:
                return process_start_time(stat.read(), init.read(), os.sysconf("SC_CLK_TCK"))
        except (OSError, Gb10ParseError):
            return None

    def docker_facts(self) -> dict:
        facts: dict = {
            "docker_version": None,
            "docker_runtimes": [],
            "docker_nvidia_runtime": False,
            "docker_nvidia_runtime_path": None,
            "docker_default_runtime": None,
            "docker_cgroup_driver": None,
            "docker_storage_driver": None,
            "docker_image_store": None,
            "docker_root_dir": None,
        }
        name = self.module.params["docker_path"]
        docker = self.module.get_bin_path(name)
        if docker is None:
            facts["docker_error"] = f"{name} not found: the Docker engine is not installed"
            return facts
        rc, out, err, stopped = self._run(docker, *DOCKER_INFO_ARGS)
        if stopped:
            facts["docker_error"] = f"{timeout_message([docker, *DOCKER_INFO_ARGS], self.timeout)}: {_SILENT_DAEMON_FIX}"
            return facts
        info: DockerInfo | None = None
        try:
            info = parse_docker_info(out)
        except DockerInfoParseError:
            if rc == 0:
                raise
        if rc != 0 or info is None or not info.answered:
            # A client that reaches no daemon still prints its JSON (empty ServerVersion); the
            # reason is in ServerErrors (older clients) or on stderr (newer ones).
            reason = "; ".join(info.server_errors) if info is not None and info.server_errors else (err or out).strip()
            facts["docker_error"] = f"{docker} info got no answer from the Docker daemon (rc={rc}): {reason or 'no reason printed'}"
            return facts
        facts.update(
            docker_version=info.server_version,
            docker_runtimes=list(info.runtimes),
            docker_nvidia_runtime=info.nvidia_runtime,
            docker_nvidia_runtime_path=info.nvidia_runtime_path,
            docker_default_runtime=info.default_runtime,
            docker_cgroup_driver=info.cgroup_driver,
            docker_storage_driver=info.storage_driver,
            docker_image_store=info.image_store,
            docker_root_dir=info.root_dir,
            docker_error=None,
        )
        return facts

    def disk_facts(self) -> dict:
        model_path = self.module.params["model_path"]
        if not os.path.isabs(model_path):
            self.module.fail_json(msg=f"model_path must be an absolute path, not {model_path!r}")
        checked = nearest_existing_path(model_path, os.path.exists)
        try:
            stat = os.statvfs(checked)
        except OSError as exc:
            self.module.fail_json(msg=f"cannot measure the free space at {checked}: {exc}")
        free, total = disk_space(stat.f_frsize, stat.f_blocks, stat.f_bavail)
        return {"disk_path_checked": checked, "disk_free_bytes": free, "disk_total_bytes": total}

    def gather(self) -> dict:
        facts = self.gpu_facts()
        facts.update(self.memory_facts())
        gpus = facts["gpus"]
        facts["unified_memory"] = bool(gpus) and all(gpu["memory_total_mib"] is None for gpu in gpus)
        facts["architecture"] = platform.machine() or os.uname().machine
        facts.update(self.kernel_facts())
        facts.update(self.docker_facts())
        facts.update(self.disk_facts())
        return facts


def main(clock: Callable[[], float] = time.monotonic) -> None:
    module = AnsibleModule(
        argument_spec={
            "nvidia_smi_path": {"type": "str", "default": "nvidia-smi"},
            "meminfo_path": {"type": "path", "default": "/proc/meminfo"},
            "nvrm_version_path": {"type": "path", "default": "/proc/driver/nvidia/version"},
            "cmdline_path": {"type": "path", "default": "/proc/cmdline"},
            "proc_stat_path": {"type": "path", "default": "/proc/stat"},
            "init_stat_path": {"type": "path", "default": "/proc/1/stat"},
            "docker_path": {"type": "str", "default": "docker"},
            "model_path": {"type": "path", "default": "/opt/sparkinfer/models"},
            "command_timeout": {"type": "int", "default": 60},
        },
        supports_check_mode=True,
    )
    if module.params["command_timeout"] <= 0:
        module.fail_json(msg=f"command_timeout must be a positive number of seconds, not {module.params['command_timeout']}")
    try:
        facts = Gb10Facts(module, clock).gather()
    except (Gb10ParseError, DockerInfoParseError) as exc:
        module.fail_json(msg=f"cannot parse the host's GPU, Docker, memory or disk facts: {exc}")
    module.exit_json(changed=False, ansible_facts={"sparkinfer_gb10": facts})


if __name__ == "__main__":
    main()
