"""ray_start_argv: the module_utils' arguments, and their refusals as filter errors."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.ray import FilterModule, ray_start_argv


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"ray_start_argv": ray_start_argv}


def test_a_refusal_is_a_filter_error_named_after_the_filter():
    with pytest.raises(AnsibleFilterError, match=r"^ray_start_argv: the spec must be a mapping, got str"):
        ray_start_argv("192.168.100.10")
