# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What vllm_image's argument specification cannot say of its variables, in one table: vllm_image's preflight refuses
on it, and validate_inventory.yml judges the same rules on what the inventory sets before any host changes.

The transfer's values reach ssh and rsync on the source node as root: a value that is not what its name says is
refused, never run. The rules read the variables by their full names; a variable the mapping lacks (the inventory did
not set it) leaves its rules unjudged, and a value of the wrong type is the argument specification's to name. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ipv4 import is_ipv4_address
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import DIGEST_PATTERN, RELEASE_PATTERN

# A login name as useradd takes it.
ACCOUNT_PATTERN = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
PLAIN_PATH_PATTERN = re.compile(r"/[A-Za-z0-9._/+-]*")
TRANSFER_PATHS = ("vllm_image_transfer_key", "vllm_image_transfer_known_hosts", "vllm_image_model_path")


def _transfers(settings: Mapping) -> bool:
    """Whether images and the model travel to other nodes: a cluster of more than one node."""
    hosts = settings.get("vllm_image_cluster_hosts")
    return isinstance(hosts, list) and len(hosts) > 1


def _image(node: str, settings: Mapping) -> Iterator[str]:
    name, digest, minimum = (settings.get(f"vllm_image_{key}") for key in ("name", "digest", "min_vllm_version"))
    if name == "":
        yield (
            "vllm_image_name is empty: set it to the image to serve (name:tag), or set sparkinfer_recipe to a recipe of the "
            "collection, whose image it then is (docs/recipes.md)."
        )
    elif isinstance(name, str) and "@" in name:
        yield (
            f"vllm_image_name is {name}: name the image by its tag (name:tag) and pin its build with vllm_image_digest "
            "(sha256:...), since an image loaded on the other nodes has no registry digest to be found by."
        )
    if isinstance(digest, str) and digest and not DIGEST_PATTERN.match(digest):
        yield f"vllm_image_digest is {digest}: give a registry digest, sha256: and 64 hexadecimal digits, or nothing."
    if isinstance(minimum, str) and minimum and not RELEASE_PATTERN.match(minimum):
        yield f"vllm_image_min_vllm_version is {minimum}: give a vLLM release as MAJOR.MINOR[.PATCH] (0.17.0), or nothing."


def _source(node: str, settings: Mapping) -> Iterator[str]:
    source, hosts = settings.get("vllm_image_source_host"), settings.get("vllm_image_cluster_hosts")
    if isinstance(source, str) and isinstance(hosts, list) and source not in hosts:
        yield f"vllm_image_source_host is {source}, which is not in vllm_image_cluster_hosts ({', '.join(map(str, hosts))})."
    if settings.get("vllm_image_source") == "load" and settings.get("vllm_image_tarball") == "":
        yield f"vllm_image_source is load: set vllm_image_tarball to the image archive (docker save output) on {source or 'the source node'}."
    timeout = settings.get("vllm_image_transfer_timeout")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout <= 0:
        yield f"vllm_image_transfer_timeout is {timeout}: give the seconds a pull, load or transfer may take, above 0."


def _transfer(node: str, settings: Mapping) -> Iterator[str]:
    if not _transfers(settings):
        return
    address, user = settings.get("vllm_image_transfer_address"), settings.get("vllm_image_transfer_user")
    if address == "":
        yield (
            f"{node} has no fabric address for the image and model transfer: run the nccl_network role first "
            "(playbooks/network.yml publishes nccl_network_host_ip) or set vllm_image_transfer_address. Images travel over the "
            "fabric, never through the management network or the admin box."
        )
    elif isinstance(address, str) and not is_ipv4_address(address):
        yield (
            f"vllm_image_transfer_address on {node} is '{address}', which is not an IPv4 address (as 192.168.100.11). It comes "
            "from nccl_network_host_ip or this node's fact file /etc/ansible/facts.d/sparkinfer_network.fact: run "
            "playbooks/network.yml again, or set it to this node's fabric address."
        )
    if isinstance(user, str) and not ACCOUNT_PATTERN.fullmatch(user):
        yield (f"vllm_image_transfer_user is '{user}': give an account name of lowercase letters, digits, '_' and '-', starting with a letter or '_'.")


def _paths(node: str, settings: Mapping) -> Iterator[str]:
    for name in TRANSFER_PATHS:
        path = settings.get(name)
        # No model path is no model to copy.
        if isinstance(path, str) and not (path == "" and name == "vllm_image_model_path") and not PLAIN_PATH_PATTERN.fullmatch(path):
            yield (
                f"{name} is '{path}': give an absolute path of letters, digits and '/', '.', '_', '+', '-' only (it reaches ssh and rsync on the source node)."
            )


RULES: tuple[Callable[[str, Mapping], Iterator[str]], ...] = (_image, _source, _transfer, _paths)


def setting_problems(node: str, settings: Mapping) -> list[str]:
    """One sentence per problem of vllm_image's variables on a node, in the table's order."""
    return [problem for rule in RULES for problem in rule(node, settings)]
