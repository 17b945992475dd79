"""ipv4_address: one dotted-quad IPv4 address and nothing else."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.test.ipv4 import TestModule as Ipv4Tests
from ansible_collections.sparkinfer.cluster.plugins.test.ipv4 import ipv4_address


def test_the_test_is_registered():
    assert Ipv4Tests().tests() == {"ipv4_address": ipv4_address}


@pytest.mark.parametrize("value", ["192.168.177.11", "10.207.7.12", "0.0.0.0", "255.255.255.255"])
def test_an_ipv4_address_passes(value):
    assert ipv4_address(value)


@pytest.mark.parametrize(
    "value",
    [
        "192.168.177.0/24",
        "192.168.177.256",
        "192.168.177",
        "192.168.177.011",
        " 192.168.177.11",
        "192.168.177.11;id",
        "spark-2",
        "fe80::1",
        "",
        None,
        3232280843,
    ],
)
def test_anything_else_fails(value):
    assert not ipv4_address(value)
