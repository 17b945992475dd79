# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What of a node's NCCL environment file may go into a support bundle (playbooks/tasks/doctor_bundle_node.yml).

By allowlist, never by denylist: a value is shown only when its name is one the nccl_network role writes itself
(roles/nccl_network/tasks/environment.yml; a unit test keeps the two the same), whose values are interface names,
addresses and NCCL switches. Every other value is masked: nccl_network_extra_env's, whatever a user or an earlier
inventory put there (HF_TOKEN, WANDB_API_KEY ...), and a line that is not NAME=value is masked whole.

No I/O here.
"""

from __future__ import annotations

import re

# The names nccl_network writes into the file, whatever nccl_network_extra_env adds.
WRITTEN_BY_THE_COLLECTION = frozenset(
    {
        "NCCL_SOCKET_IFNAME",
        "GLOO_SOCKET_IFNAME",
        "TP_SOCKET_IFNAME",
        "UCX_NET_DEVICES",
        "VLLM_HOST_IP",
        "RAY_NODE_IP_ADDRESS",
        "MASTER_ADDR",
        "NCCL_DEBUG",
        "NCCL_DEBUG_SUBSYS",
        "NCCL_IB_DISABLE",
        "NCCL_IB_HCA",
        "NCCL_IB_GID_INDEX",
    }
)
MASK = "<masked>"
_ASSIGNMENT = re.compile(r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")


def _masked_line(line: str) -> str:
    if not line.strip() or line.lstrip().startswith("#"):
        return line
    assignment = _ASSIGNMENT.match(line)
    if assignment is None:
        return MASK
    name = assignment.group("name")
    return line if name in WRITTEN_BY_THE_COLLECTION else f"{name}={MASK}"


def masked_env_file(text: str) -> str:
    """The file's text with every value masked but those of the names the collection writes; comments kept."""
    return "\n".join(_masked_line(line) for line in text.splitlines())


def masked_inspect(inspect: dict) -> dict:
    """A container's docker inspect with every value of its environment masked (Config.Env holds the API key)."""
    config = inspect.get("Config") or {}
    env = [str(entry).split("=", 1)[0] + "=" + MASK for entry in config.get("Env") or []]
    return {**inspect, "Config": {**config, "Env": env}}


def command_texts(results: list) -> dict[str, str]:
    """Each command's file of a registered loop over {name, argv} items: its output, then its errors (a command that
    failed is evidence too); items the loop skipped are left out."""
    return {
        result["item"]["name"]: "\n".join((result.get("stdout") or "", result.get("stderr") or "")).strip() for result in results if not result.get("skipped")
    }


def bundle_files(texts: dict[str, str], secrets: list[str]) -> list[dict[str, str]]:
    """The files {name, content}, in order, every occurrence of each secret (trimmed; empty ones ignored) masked."""
    kept = [secret.strip() for secret in secrets if isinstance(secret, str) and secret.strip()]
    files = []
    for name, text in texts.items():
        masked = text
        for secret in kept:
            masked = masked.replace(secret, MASK)
        files.append({"name": name, "content": masked})
    return files
