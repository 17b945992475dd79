# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether INPUT still sends a listener's ports to the collection's firewall chain, over IPv4 and IPv6 (doctor.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._firewall_read import input_jumps


def firewall_input_jumps(results, chain):
    """{guards, open} of the loop results of ``iptables -S INPUT`` and ``ip6tables -S INPUT``."""
    if not isinstance(results, list) or not all(isinstance(result, dict) for result in results):
        raise AnsibleFilterError("firewall_input_jumps: expected the loop results of iptables -S INPUT and ip6tables -S INPUT")
    return input_jumps(results, str(chain))


class FilterModule:
    def filters(self):
        return {"firewall_input_jumps": firewall_input_jumps}
