#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: fabric_facts
short_description: Gather the RoCE fabric facts of a host (DGX Spark ConnectX-7) from sysfs
version_added: 0.1.0
description:
  - Reads the RDMA devices (HCAs) under C(class/infiniband) of sysfs and, for each HCA port, its
    netdev (C(device/net)), port state, physical state, link layer and rate, the netdev's MTU and
    operstate, and the RoCE v2 IPv4 GID of its GID table. Also lists every non-loopback netdev of
    C(class/net), so that a play can pick a socket interface on a host without RDMA.
  - The RoCE v2 IPv4 GID index is the lowest index whose C(gid_attrs/types) entry reads C(RoCE v2)
    and whose GID is IPv4-mapped (C(::ffff:a.b.c.d)); the IPv4 address it carries is returned with it.
    The index is read live on every run because it moves when interface events reshuffle the GID
    table (3 to 4 or 5 has been seen on Sparks), so it must not be pinned.
  - Unused GID entries (all zeros, whose type and ndev files fail with EINVAL) are skipped; a GID
    entry whose type cannot be read is never taken as RoCE v2.
  - "Twins: a DGX Spark's ConnectX-7 shows each physical QSFP port as two PCIe Gen5 x4 halves, two
    HCAs with the same PCI bus:device.function in two PCI domains (C(rocep1s0f1) at 0000:01:00.1 and
    C(roceP2p1s0f1) at 0002:01:00.1 are port 1). Exactly two HCAs whose PCI addresses (the target of
    C(class/infiniband/<hca>/device)) agree in bus:device.function and differ in domain are reported
    as twins; any other grouping is left unpaired. NCCL reaches the full 200 Gb/s of one cable only
    with both twins in C(NCCL_IB_HCA)."
  - The physical port is the PCI function number; mlx5 derives the netdev's C(phys_port_name) (the
    C(np0)/C(np1) suffix of C(enp1s0f1np1)) from the same number, so that attribute adds nothing.
  - With no C(class/infiniband) at all, C(hcas) is empty and C(rdma_present) false, and the play decides.
  - Returns the facts under C(ansible_facts['sparkinfer_fabric']).
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
  - sparkinfer.cluster._attributes.FACTS
  - sparkinfer.cluster._attributes.FACTS_MODULE
options:
  sysfs_root:
    description: Where sysfs is mounted; C(class/net) and C(class/infiniband) are read below it.
    type: path
    default: /sys
  hcas:
    description:
      - Report only these HCAs (RDMA device names such as C(rocep1s0f1)) in C(hcas); names that are
        not present give a warning.
      - C(twins) and C(netdevs) always cover the whole host.
    type: list
    elements: str
notes:
  - Only sysfs is read; no RDMA tool (C(ibdev2netdev), C(show_gids), C(ibv_devinfo)) needs to be installed.
seealso:
  - name: Linux kernel sysfs ABI of class/infiniband
    description: The files this module reads and their formats.
    link: https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband
  - name: NVIDIA DGX Spark playbooks, Connect Two Sparks
    description: The ConnectX-7 interfaces of a Spark and which two belong to one physical port.
    link: https://github.com/NVIDIA/dgx-spark-playbooks/blob/main/nvidia/connect-two-sparks/README.md
"""

EXAMPLES = r"""
- name: Gather the fabric facts
  sparkinfer.cluster.fabric_facts:

- name: Fail unless both halves of the cabled port are up with a RoCE v2 IPv4 GID
  ansible.builtin.assert:
    that:
      - __fabric_up | length == 2
      - __fabric_up | rejectattr('roce_v2_ipv4_gids') | list | length == 0
    fail_msg: "expected two ACTIVE twin HCAs with a RoCE v2 IPv4 GID, found {{ __fabric_up | map(attribute='name') | list }}"
  vars:
    __fabric_up: "{{ ansible_facts['sparkinfer_fabric']['hcas'] | selectattr('state', 'eq', 'ACTIVE') | list }}"

- name: Name both twins in NCCL_IB_HCA
  ansible.builtin.set_fact:
    __nccl_ib_hca: "{{ ansible_facts['sparkinfer_fabric']['twins'] | first | join(',') }}"
  when: ansible_facts['sparkinfer_fabric']['twins'] | length > 0
"""

RETURN = r"""
ansible_facts:
  description: Facts to add to C(ansible_facts).
  returned: always
  type: dict
  contains:
    sparkinfer_fabric:
      description: The host's RDMA fabric facts.
      returned: always
      type: dict
      contains:
        rdma_present:
          description: True when sysfs lists at least one RDMA device under C(class/infiniband).
          type: bool
          returned: always
          sample: true
        hcas:
          description:
            - One entry per port of each HCA (a Spark's HCAs have one port, number 1), in PCI address order.
            - Each field is null when sysfs does not give it.
          type: list
          elements: dict
          returned: always
          contains:
            name: {description: The RDMA device., type: str, returned: always, sample: rocep1s0f1}
            pci_address: {description: The PCI function of the HCA., type: str, returned: always, sample: "0000:01:00.1"}
            netdev: {description: The network interface of the HCA port., type: str, returned: always, sample: enp1s0f1np1}
            port: {description: The HCA port number., type: int, returned: always, sample: 1}
            state: {description: "The port state name: C(DOWN), C(INIT), C(ARMED), C(ACTIVE)...", type: str, returned: always, sample: ACTIVE}
            phys_state: {description: "The physical state name: C(Disabled), C(Polling), C(LinkUp)...", type: str, returned: always, sample: LinkUp}
            link_layer: {description: C(Ethernet) for RoCE or C(InfiniBand)., type: str, returned: always, sample: Ethernet}
            rate_gbps: {description: The port rate in Gb/s., type: float, returned: always, sample: 200.0}
            mtu: {description: The MTU of the netdev., type: int, returned: always, sample: 9000}
            operstate: {description: The operstate of the netdev., type: str, returned: always, sample: up}
            roce_v2_ipv4_gids:
              description:
                - Every GID table entry of type RoCE v2 holding an IPv4-mapped GID, by index, as C(index) and C(address)
                  (NCCL's candidates for C(NCCL_IB_GID_INDEX)); empty when the netdev has no IPv4 address or the port is down.
                - Each address has its own entry, and the indices drift as addresses come and go (3 to 4 within 30 minutes
                  on a Spark), so pick the entry by address, never by position.
              type: list
              elements: dict
              returned: always
              sample: [{index: 3, address: 192.168.100.10}]
            twin: {description: The other HCA of the same physical port., type: str, returned: always, sample: roceP2p1s0f1}
            physical_port: {description: The physical port of the adapter (the PCI function number)., type: int, returned: always, sample: 1}
          sample:
            - name: rocep1s0f1
              pci_address: "0000:01:00.1"
              netdev: enp1s0f1np1
              port: 1
              state: ACTIVE
              phys_state: LinkUp
              link_layer: Ethernet
              rate_gbps: 200.0
              mtu: 9000
              operstate: up
              roce_v2_ipv4_gids: [{index: 3, address: 192.168.100.10}]
              twin: roceP2p1s0f1
              physical_port: 1
        twins:
          description: The twin HCA pairs, each as [domain 0000 half, other half], in physical port order.
          type: list
          elements: list
          returned: always
          sample: [[rocep1s0f0, roceP2p1s0f0], [rocep1s0f1, roceP2p1s0f1]]
        netdevs:
          description: Every network interface of C(class/net) but loopback, by name.
          type: list
          elements: dict
          returned: always
          contains:
            name: {description: The interface., type: str, returned: always, sample: enP7s7}
            mtu: {description: Its MTU., type: int, returned: always, sample: 1500}
            operstate: {description: "Its operstate (C(up), C(down), C(unknown)...).", type: str, returned: always, sample: up}
            address: {description: Its hardware address., type: str, returned: always, sample: "3c:6d:66:cc:b3:b7"}
            speed_mbps: {description: Its link speed in Mb/s; null when unknown or down., type: int, returned: always, sample: 200000}
            hca: {description: "The HCA whose PCI function this interface is, or null.", type: str, returned: always, sample: rocep1s0f1}
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._fabric import (
    FabricParseError,
    FabricReadError,
    SysfsReader,
    fabric_facts,
)


class FabricFacts:
    def __init__(self, module: AnsibleModule) -> None:
        self.module = module
        self.root = module.params["sysfs_root"]
        self.wanted = module.params["hcas"]

    def gather(self) -> dict:
        if not os.path.isdir(self.root):
            self.module.fail_json(
                msg=f"sysfs_root {self.root} is not a directory: mount sysfs there (mount -t sysfs sysfs {self.root}) or point sysfs_root at it"
            )
        read = SysfsReader(self.root).read()
        if self.wanted is not None:
            missing = sorted(set(self.wanted) - {hca.name for hca in read.hcas})
            if missing:
                self.module.warn(f"hcas {', '.join(missing)} not found under {os.path.join(self.root, 'class', 'infiniband')}")
        return fabric_facts(read, self.wanted)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "sysfs_root": {"type": "path", "default": "/sys"},
            "hcas": {"type": "list", "elements": "str"},
        },
        supports_check_mode=True,
    )
    try:
        facts = FabricFacts(module).gather()
    except FabricReadError as exc:
        module.fail_json(msg=f"cannot read the RDMA fabric from sysfs: {exc}; run with become, or check that sysfs is mounted at {module.params['sysfs_root']}")
    except FabricParseError as exc:
        module.fail_json(msg=f"cannot parse the RDMA fabric from sysfs under {module.params['sysfs_root']}: {exc}")
    module.exit_json(changed=False, ansible_facts={"sparkinfer_fabric": facts})


if __name__ == "__main__":
    main()
