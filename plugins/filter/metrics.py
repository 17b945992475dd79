# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Metrics: vLLM's /metrics answer, read by prometheus_client's text parser for the status table, and the Prometheus
file_sd targets of every cluster."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._prometheus_targets import file_sd_groups
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_metrics import metrics_line, summarize_vllm_metrics

MISSING_PARSER = (
    "the admin box's Python has no prometheus_client, the parser of Prometheus' text format: "
    "pip install prometheus-client (the collection's requirements.txt) where ansible-playbook runs"
)


def _text_parser():
    """prometheus_client's parser of the text format, or None where it is not installed (the table says so)."""
    try:
        return importlib.import_module("prometheus_client.parser").text_string_to_metric_families
    except ImportError:
        return None


def _answer_text(answer):
    """The text of a uri result that answered 200, else (None, the problem): the request and why it got no figures."""
    if answer.get("status") == 200:
        return answer.get("content") or "", ""
    problem = f"GET {answer.get('url', '/metrics')}: {answer.get('msg') or 'no answer'}"
    return None, problem + (" (the API key differs from the server's)" if answer.get("status") == 401 else "")


def vllm_metrics(text):
    """The summary of a /metrics answer (its text, or the uri result that asked for it), with a line for the table;
    `problem` says why there are no figures."""
    if isinstance(text, Mapping):
        text, problem = _answer_text(text)
        if text is None:
            return {"problem": problem}
    if not isinstance(text, str):
        raise AnsibleFilterError(f"vllm_metrics: expected the text of a /metrics answer, got {type(text).__name__}")
    parse = _text_parser()
    if parse is None:
        return {"problem": MISSING_PARSER}
    try:
        samples = [(sample.name, sample.labels, sample.value) for family in parse(text) for sample in family.samples]
    except ValueError as error:
        return {"problem": f"the answer is not Prometheus' text format ({error})"}
    summary = summarize_vllm_metrics(samples)
    if not summary["vllm"]:
        return {"problem": "the answer has no vllm: series (is it vLLM's /metrics?)"}
    return {**summary, "line": metrics_line(summary), "problem": ""}


def prometheus_file_sd(nodes):
    """The target groups of a Prometheus file_sd file for these nodes' vLLM and Ray metrics."""
    wanted = {"cluster", "node", "vllm_endpoint", "ray_metrics"}
    if not isinstance(nodes, list) or not all(isinstance(row, dict) and wanted <= set(row) for row in nodes):
        raise AnsibleFilterError(f"prometheus_file_sd: expected a list of mappings with the keys {sorted(wanted)}, got {nodes!r}")
    try:
        return file_sd_groups(nodes)
    except ValueError as error:
        raise AnsibleFilterError(f"prometheus_file_sd: {error}") from error


class FilterModule:
    def filters(self):
        return {"vllm_metrics": vllm_metrics, "prometheus_file_sd": prometheus_file_sd}
