#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: firewall_chain
short_description: One iptables chain that lets only loopback, replies and given IPv4 sources reach given TCP ports
version_added: 0.1.0
description:
  - Keeps a chain in the filter table of iptables and ip6tables, and one jump to it first in C(INPUT) for the
    given TCP ports. The chain accepts loopback, established and related connections and the O(sources) (IPv4, so
    the IPv6 chain has none), then drops the rest. The module owns that chain and that jump and nothing else; the
    host's own rules and Docker's chains stay as they are.
  - Writes the same rules in C(iptables-restore) form to O(rules_files), for a unit that loads them at boot with
    C(iptables-restore --noflush) before Docker restarts the containers whose ports they guard.
  - Reads the running rules with C(iptables -S) and changes them only when they differ (another port, a source
    gone or added, a stale or duplicate jump, a rule inserted by hand into the chain), in one C(iptables-restore
    --noflush) commit per family that deletes the jumps to the chain, declares the chain (which flushes it), fills
    it and inserts the jump first in C(INPUT).
  - With O(state=absent), deletes the jumps and the chain in both families and removes the rules files.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - Per family, the jump and the chain's rules as C(iptables -S) prints them, before and after.
options:
  chain:
    description: The chain's name in the filter table, 1 to 28 upper-case letters, digits and dashes, starting with a letter.
    type: str
    required: true
  ports:
    description:
      - The TCP ports (V(6379)) and ranges (V(10002:19999)) the jump sends to the chain. Required with O(state=present).
      - At most 15, a range counting two (C(iptables) C(multiport)).
    type: list
    elements: str
    default: []
  sources:
    description: The IPv4 addresses the chain accepts (the cluster's nodes).
    type: list
    elements: str
    default: []
  comment:
    description:
      - The jump's comment, 1 to 200 letters, digits, spaces and C(._,:()/-) (nothing C(iptables-restore) or systemd
        would read as quoting or expansion).
    type: str
    default: sparkinfer.cluster firewall_chain
  rules_files:
    description:
      - Where to write the rules in C(iptables-restore) form, per family (keys V(ipv4) and V(ipv6)). Written root-owned
        C(0644) when their content differs; their directory is created C(0755) when missing and never re-owned.
        Removed with O(state=absent).
      - An empty dict writes no file.
    type: dict
    default: {}
  state:
    description: Whether the chain and its jump are there (V(present)) or not (V(absent)).
    type: str
    choices: [present, absent]
    default: present
  command_timeout:
    description: Seconds each C(iptables), C(ip6tables) and C(*-restore) command may run (under C(timeout(1))).
    type: int
    default: 30
notes:
  - Needs root and C(iptables), C(ip6tables), C(iptables-restore) and C(ip6tables-restore) on the PATH (the nft or the
    legacy backend). Each runs with C(-w), waiting for the xtables lock another tool (Docker) holds, within O(command_timeout).
seealso:
  - name: iptables-restore(8)
    description: The restore format, and C(--noflush), which flushes only the chains the input declares.
    link: https://manpages.debian.org/bookworm/iptables/iptables-restore.8.en.html
"""

EXAMPLES = r"""
- name: Let only the cluster's nodes reach Ray's ports
  sparkinfer.cluster.firewall_chain:
    chain: SPARKINFER-RAY
    ports: ["6379", "6380", "6381", "10002:19999"]
    sources: [192.168.177.11, 192.168.177.12]
    comment: Ray ports, cluster nodes only
    rules_files:
      ipv4: /etc/sparkinfer/ray-firewall.rules
      ipv6: /etc/sparkinfer/ray-firewall6.rules

- name: Remove the chain, its jump and its rules files
  sparkinfer.cluster.firewall_chain:
    chain: SPARKINFER-RAY
    state: absent
    rules_files:
      ipv4: /etc/sparkinfer/ray-firewall.rules
      ipv6: /etc/sparkinfer/ray-firewall6.rules
"""

RETURN = r"""
applied:
  description: The families whose running rules were changed (or, in check mode, would be).
  returned: always
  type: list
  elements: str
  sample: [ipv4]
files_changed:
  description: The rules files written or removed (or, in check mode, that would be).
  returned: always
  type: list
  elements: str
  sample: [/etc/sparkinfer/ray-firewall.rules]
jump:
  description:
    - The INPUT rule that sends TCP for O(ports) to the chain, without its C(-A INPUT), as C(iptables -D INPUT) takes it
      (a boot unit deletes it before loading the rules files, so that a second start leaves one jump).
  returned: always
  type: str
  sample: -p tcp -m multiport --dports 6379 -m comment --comment "Ray ports, cluster nodes only" -j SPARKINFER-RAY
rules:
  description: Per family, the jump to the chain and the chain's rules as C(iptables -S) printed them before the module ran.
  returned: always
  type: dict
  sample:
    ipv4:
      - -A INPUT -p tcp -m multiport --dports 6379 -m comment --comment "Ray ports, cluster nodes only" -j SPARKINFER-RAY
      - -A SPARKINFER-RAY -i lo -j ACCEPT
"""

import ipaddress
import os
import re
import tempfile
import time
from collections.abc import Callable

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import run_bounded, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._iptables_chain import (
    FAMILIES,
    Chain,
    Running,
    absent,
    in_place,
    read_running,
    restore_to_put,
    restore_to_remove,
    shown,
    wanted_shown,
)

_COMMANDS = {"ipv4": ("iptables", "iptables-restore"), "ipv6": ("ip6tables", "ip6tables-restore")}
_PORT = re.compile(r"^[0-9]{1,5}(:[0-9]{1,5})?$")


def _ipv4_address(value: str) -> bool:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True


def input_errors(params: dict) -> list[str]:
    """What is wrong with the options, each naming the option and what it takes."""
    errors = []
    if not re.match(r"^[A-Z][A-Z0-9-]{0,27}$", params["chain"]):
        errors.append(f"chain must be 1 to 28 upper-case letters, digits and dashes starting with a letter, not {params['chain']!r}")
    ports = params["ports"]
    if [port for port in ports if not _PORT.match(port)]:
        errors.append(f"ports must be TCP ports or MIN:MAX ranges, not {ports!r}")
    if len(ports) + len([port for port in ports if ":" in port]) > 15:
        errors.append(f"ports holds more than 15 ports, a range counting two: {ports!r}")
    if params["state"] == "present" and not ports:
        errors.append("ports is empty: give the TCP ports the chain guards")
    if [source for source in params["sources"] if not _ipv4_address(source)]:
        errors.append(f"sources must be IPv4 addresses, not {params['sources']!r}")
    if not re.match(r"^[A-Za-z0-9 ._,:()/-]{1,200}$", params["comment"]):
        errors.append(f"comment must be 1 to 200 letters, digits, spaces and ._,:()/-, not {params['comment']!r}")
    unknown = sorted(set(params["rules_files"]) - set(FAMILIES))
    if unknown or [path for path in params["rules_files"].values() if not os.path.isabs(str(path))]:
        errors.append(f"rules_files takes the keys ipv4 and ipv6, each an absolute path, not {params['rules_files']!r}")
    return errors


class FirewallChain:
    def __init__(self, module: AnsibleModule, clock: Callable[[], float]) -> None:
        self.module = module
        self.clock = clock
        params = module.params
        self.chain = Chain(params["chain"], tuple(params["ports"]), tuple(params["sources"]), params["comment"])
        self.wanted = params["state"] == "present"

    def _run(self, family: str, restore: bool, data: str | None = None) -> str:
        """Run iptables -S (or iptables-restore --noflush with `data`) of a family; fail naming the command otherwise."""
        name = _COMMANDS[family][1 if restore else 0]
        # -w: wait for the xtables lock another tool (Docker) holds, as the legacy backend needs; nft accepts and ignores it.
        argv = [self.module.get_bin_path(name, required=True), "-w", *(["--noflush"] if restore else ["-S"])]
        seconds = self.module.params["command_timeout"]
        wrapper = self.module.get_bin_path("timeout", required=True)
        rc, out, err, stopped = run_bounded(self.module.run_command, wrapper, seconds, argv, self.clock, data=data, binary_data=True)
        if stopped:
            self.module.fail_json(msg=f"{timeout_message(argv, seconds)}: check which other firewall tool holds the xtables lock")
        if rc != 0:
            what = f"{name} rejected the rules of {self.chain.name}" if restore else f"{name} -S failed"
            self.module.fail_json(msg=f"{what} (rc={rc}): {(err or out).strip()}", rc=rc, stdin=data or "")
        return out

    def _file_content(self, family: str) -> str:
        header = (
            f"Written by sparkinfer.cluster.firewall_chain: the {family} rules of {self.chain.name}.",
            f"Loaded with `{_COMMANDS[family][1]} --noflush` at boot, before Docker starts the containers.",
        )
        return self.chain.rules_file(family, header)

    def _sync_file(self, path: str, content: str | None) -> bool:
        """Write (or with None remove) a rules file when it differs; whether it did (or would)."""
        exists = os.path.exists(path)
        if content is None:
            if exists and not self.module.check_mode:
                os.remove(path)
            return exists
        if exists:
            with open(path, encoding="utf-8") as current:
                if current.read() == content:
                    return False
        if not self.module.check_mode:
            directory = os.path.dirname(path)
            if not os.path.isdir(directory):
                os.makedirs(directory, mode=0o755)
            handle, staged = tempfile.mkstemp(dir=directory, prefix=".firewall_chain.")
            with os.fdopen(handle, "w", encoding="utf-8") as staging:
                staging.write(content)
            os.chmod(staged, 0o644)
            os.chown(staged, 0, 0)
            self.module.atomic_move(staged, path)
        return True

    def run(self) -> dict:
        result: dict = {"applied": [], "files_changed": [], "jump": self.chain.jump(), "rules": {}, "diff": []}
        for family in FAMILIES:
            running = read_running(self._run(family, restore=False), self.chain.name)
            result["rules"][family] = running.jumps + running.rules
            if self._needs_change(running, family):
                result["applied"].append(family)
                result["diff"].append(
                    {"before_header": f"{family} rules", "after_header": f"{family} rules", "before": shown(running), "after": self._after(family)}
                )
                if not self.module.check_mode:
                    self._run(family, restore=True, data=self._restore_input(running, family))
            path = self.module.params["rules_files"].get(family)
            if path and self._sync_file(path, self._file_content(family) if self.wanted else None):
                result["files_changed"].append(path)
        result["changed"] = bool(result["applied"] or result["files_changed"])
        return result

    def _needs_change(self, running: Running, family: str) -> bool:
        return not in_place(running, self.chain, family) if self.wanted else not absent(running)

    def _after(self, family: str) -> str:
        return wanted_shown(self.chain, family) if self.wanted else ""

    def _restore_input(self, running: Running, family: str) -> str:
        return restore_to_put(running, self.chain, family) if self.wanted else restore_to_remove(running, self.chain.name)


def main(clock: Callable[[], float] = time.monotonic) -> None:
    module = AnsibleModule(
        argument_spec={
            "chain": {"type": "str", "required": True},
            "ports": {"type": "list", "elements": "str", "default": []},
            "sources": {"type": "list", "elements": "str", "default": []},
            "comment": {"type": "str", "default": "sparkinfer.cluster firewall_chain"},
            "rules_files": {"type": "dict", "default": {}},
            "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
            "command_timeout": {"type": "int", "default": 30},
        },
        supports_check_mode=True,
    )
    errors = input_errors(module.params)
    if module.params["command_timeout"] <= 0:
        errors.append(f"command_timeout must be a positive number of seconds, not {module.params['command_timeout']}")
    if errors:
        module.fail_json(msg="firewall_chain: " + "; ".join(errors))
    result = FirewallChain(module, clock).run()
    if not module._diff:
        del result["diff"]
    module.exit_json(**result)


if __name__ == "__main__":
    main()
