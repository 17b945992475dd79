# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Prometheus file_sd target groups for every cluster: each head's vLLM API and each node's Ray metrics export."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

VLLM_JOB = "sparkinfer-vllm"
RAY_JOB = "sparkinfer-ray"


def file_sd_groups(nodes: Iterable[Mapping[str, str]]) -> list[dict]:
    """One target group per metrics endpoint, in a stable order.

    A node is a mapping of `cluster` (its head), `node`, `vllm_endpoint` (the API's base URL a launch recorded on the
    head, such as https://10.0.0.1:8000/v1; empty elsewhere) and `ray_metrics` (host:port of its Ray metrics export;
    empty without Ray). The groups set `job`, `__scheme__` and `__metrics_path__`, which Prometheus takes over its
    scrape config's own, so one file_sd_configs entry scrapes both kinds.
    """
    groups = []
    for row in sorted(nodes, key=lambda row: (row["cluster"], row["node"])):
        labels = {"sparkinfer_cluster": row["cluster"], "sparkinfer_node": row["node"]}
        if row.get("vllm_endpoint"):
            url = urlsplit(row["vllm_endpoint"])
            if url.scheme not in ("http", "https") or not url.netloc:
                raise ValueError(f"{row['node']}: the vLLM endpoint {row['vllm_endpoint']!r} is not an http(s) URL")
            groups.append(
                {
                    "targets": [url.netloc],
                    "labels": {"job": VLLM_JOB, "__scheme__": url.scheme, "__metrics_path__": "/metrics", **labels},
                }
            )
        if row.get("ray_metrics"):
            groups.append({"targets": [row["ray_metrics"]], "labels": {"job": RAY_JOB, "__metrics_path__": "/metrics", **labels}})
    return groups
