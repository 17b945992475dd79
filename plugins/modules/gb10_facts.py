#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: gb10_facts
short_description: Gather the GPU, driver and unified-memory facts of a DGX Spark (GB10) host
version_added: 0.1.0
description:
  - Queries C(nvidia-smi) for every GPU (name, compute capability, driver, PCI bus id, memory fields)
    and for the CUDA version its banner prints, and reads the host's memory from C(/proc/meminfo).
  - On a GB10 the memory fields of C(nvidia-smi) read C([N/A]) because the GPU shares the host's
    unified memory; C(MemAvailable) from C(/proc/meminfo) is then the memory figure to plan with.
  - Returns the facts under C(ansible_facts['sparkinfer_gb10']).
  - When C(nvidia-smi) is not installed or fails, C(gpus) is empty and C(nvidia_smi_error) says why,
    so that a play can assert with its own message.
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
notes:
  - Commands run with C(LC_ALL=C) so that their output parses the same everywhere.
"""

EXAMPLES = r"""
- name: Gather the GB10 facts
  sparkinfer.cluster.gb10_facts:

- name: Fail unless the host has a GB10
  ansible.builtin.assert:
    that:
      - ansible_facts['sparkinfer_gb10']['gpus'] | map(attribute='name') | list == ['NVIDIA GB10']
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
              uuid: GPU-a1b2c3d4-0000-0000-0000-000000000000
              pci_bus_id: 0000000F:01:00.0
              compute_cap: "12.1"
              driver_version: 580.95.05
              memory_total_mib: null
              memory_used_mib: null
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
          description: Why no GPU could be read (missing executable, failing command), or null.
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
        architecture:
          description: The host's CPU architecture as C(uname -m) prints it.
          type: str
          returned: always
          sample: aarch64
"""

import os
import platform

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import (
    GPU_QUERY_FIELDS,
    Gb10ParseError,
    driver_branch,
    parse_gpu_query_csv,
    parse_meminfo,
    parse_smi_banner,
)


class Gb10Facts:
    def __init__(self, module: AnsibleModule) -> None:
        self.module = module

    def _run(self, smi: str, *args: str) -> tuple[int, str, str]:
        return self.module.run_command([smi, *args], environ_update={"LC_ALL": "C"})

    def gpu_facts(self) -> dict:
        facts: dict = {"gpus": [], "driver_version": None, "driver_branch": None, "cuda_version": None}
        smi = self.module.get_bin_path(self.module.params["nvidia_smi_path"])
        if smi is None:
            facts["nvidia_smi_error"] = f"{self.module.params['nvidia_smi_path']} not found: the NVIDIA driver is not installed"
            return facts
        rc, out, err = self._run(smi, f"--query-gpu={','.join(GPU_QUERY_FIELDS)}", "--format=csv")
        if rc != 0:
            facts["nvidia_smi_error"] = f"{smi} --query-gpu failed with rc={rc}: {(err or out).strip()}"
            return facts
        gpus = parse_gpu_query_csv(out)
        rc, banner_out, err = self._run(smi)
        if rc != 0:
            facts["nvidia_smi_error"] = f"{smi} failed with rc={rc}: {(err or banner_out).strip()}"
            return facts
        banner = parse_smi_banner(banner_out)
        facts.update(
            gpus=[gpu.as_dict() for gpu in gpus],
            driver_version=banner.driver_version,
            driver_branch=driver_branch(banner.driver_version),
            cuda_version=banner.cuda_version,
            nvidia_smi_error=None,
        )
        return facts

    def memory_facts(self) -> dict:
        path = self.module.params["meminfo_path"]
        try:
            with open(path, encoding="ascii") as handle:
                meminfo = parse_meminfo(handle.read())
        except OSError as exc:
            self.module.fail_json(msg=f"cannot read {path}: {exc}")
        return {"memory_total_kib": meminfo["MemTotal"], "memory_available_kib": meminfo["MemAvailable"]}

    def gather(self) -> dict:
        facts = self.gpu_facts()
        facts.update(self.memory_facts())
        gpus = facts["gpus"]
        facts["unified_memory"] = bool(gpus) and all(gpu["memory_total_mib"] is None for gpu in gpus)
        facts["architecture"] = platform.machine() or os.uname().machine
        return facts


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "nvidia_smi_path": {"type": "str", "default": "nvidia-smi"},
            "meminfo_path": {"type": "path", "default": "/proc/meminfo"},
        },
        supports_check_mode=True,
    )
    try:
        facts = Gb10Facts(module).gather()
    except Gb10ParseError as exc:
        module.fail_json(msg=f"cannot parse the host's GPU or memory facts: {exc}")
    module.exit_json(changed=False, ansible_facts={"sparkinfer_gb10": facts})


if __name__ == "__main__":
    main()
