# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The message a failed vLLM gate ends with: the diagnosis and the fix first, then the other ranks, the fabric, the tail."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# Each log line of the tail is cut to this many characters: a line of vLLM's engine-config dump runs to 2 KB.
TAIL_WIDTH = 160
FABRIC_FIX = "mend it, then run the role again."


def _cut(line: str, width: int = TAIL_WIDTH) -> str:
    line = line.rstrip()
    return line if len(line) <= width else line[: width - 3] + "..."


def _rank_line(number: int, result: dict) -> str:
    log = result.get("vllm_log")
    if not isinstance(log, dict):
        return f"Rank {number} on {result.get('item')}: {result.get('msg') or 'no log'}."
    error = log.get("error")
    decisive = f", {error['line']} -> {error['hint']}" if isinstance(error, dict) else ""
    return f"Rank {number} on {result.get('item')}: {log.get('outcome')} at stage {log.get('stage')}{decisive}."


def _ping_line(head: str, result: dict, addresses: dict) -> str:
    node = result.get("item")
    where = f"{head} -> {node} ({addresses.get(node, '?')})"
    if result.get("rc") == 0:
        return f"{where} answers over the fabric."
    return f"{where} does not answer over the fabric: the link between them is down or filtered (cable, switch port, firewall); {FABRIC_FIX}"


def _stop_line(result: dict, check_mode: bool) -> str:
    node = result.get("item")
    if "container" in result:
        return f"The rank on {node} {'would be stopped (check mode)' if check_mode else 'was stopped'}."
    return f"The rank on {node} could not be stopped ({result.get('msg') or 'unknown error'}): stop it by hand."


# The keywords the message cannot be written without.
_REQUIRED = ("head", "image", "container", "stage")


def vllm_gate_failure_message(
    failure, *, head=None, image=None, container=None, stage=None, ranks=None, pings=None, stopped=None, addresses=None, check_mode=False
):
    """One line per part: what failed (the diagnosis and fix), the other ranks, the fabric to each, the stops, the tail."""
    if not isinstance(failure, dict):
        raise AnsibleFilterError(f"vllm_gate_failure_message: the failed wait's result must be a dictionary, got {type(failure).__name__}")
    given = {"head": head, "image": image, "container": container, "stage": stage}
    missing = [name for name in _REQUIRED if given[name] is None]
    if missing:
        raise AnsibleFilterError(f"vllm_gate_failure_message: give {', '.join(f'{name}=...' for name in missing)} (required: {', '.join(_REQUIRED)})")
    lines = [f"vLLM on {head} ({image}, container {container}) did not reach {stage}: {failure.get('msg') or 'no message'}"]
    lines += [_rank_line(number, result) for number, result in enumerate(ranks or [], start=1)]
    lines += [_ping_line(head, result, addresses or {}) for result in pings or []]
    lines += [_stop_line(result, check_mode) for result in stopped or []]
    lines.append(
        f"Their logs stay (docker logs {container} on each rank); the next launch removes the stopped containers, "
        "and so does vllm_serve_state=absent (playbooks/teardown.yml)."
    )
    tail = failure.get("tail") or []
    if tail:
        lines.append(f"Last {len(tail)} lines of the log on {head}, each cut at {TAIL_WIDTH} characters:")
        lines += [f"  {_cut(str(line))}" for line in tail]
    return "\n".join(lines)


class FilterModule:
    def filters(self):
        return {"vllm_gate_failure_message": vllm_gate_failure_message}
