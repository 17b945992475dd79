"""The vllm_log_facts filter: the same facts as the parser, and a clear error on bad input."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.parsers import FilterModule, vllm_log_facts
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log

from ..module_utils.corpus import lab_log, lines, text

LOG = lab_log("0.32.0-ready-tp1")


def test_filter_is_registered():
    assert FilterModule().filters() == {"vllm_log_facts": vllm_log_facts}


def test_filter_gives_the_parser_facts():
    log_text = text(LOG)
    assert vllm_log_facts(log_text) == parse_vllm_log(lines(LOG))
    assert vllm_log_facts(log_text)["architecture"] == "Qwen3MoeForCausalLM"


def test_filter_refuses_non_text():
    with pytest.raises(AnsibleFilterError, match="expects the log as a string, got list"):
        vllm_log_facts(["INFO ..."])
