"""The vllm_log_facts filter: the same facts as the parser, and a clear error on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.parsers import FilterModule, vllm_log_facts
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log

LOG = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm" / "lab" / "0.32.0-ready-tp1.log"


def test_filter_is_registered():
    assert FilterModule().filters() == {"vllm_log_facts": vllm_log_facts}


def test_filter_gives_the_parser_facts():
    text = LOG.read_text(encoding="utf-8")
    with LOG.open(encoding="utf-8") as handle:
        assert vllm_log_facts(text) == parse_vllm_log(handle)
    assert vllm_log_facts(text)["architecture"] == "Qwen3MoeForCausalLM"


def test_filter_refuses_non_text():
    with pytest.raises(AnsibleFilterError, match="expects the log as a string, got list"):
        vllm_log_facts(["INFO ..."])
