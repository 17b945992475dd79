"""The raylet read from real `docker top` outputs (fixtures/docker_top/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._raylet import DockerTopParseError, Raylet, parse_docker_top, raylet_of

FIXTURES = Path(__file__).parent / "fixtures" / "docker_top"
HEAD = (FIXTURES / "ray-2.60.0-head.top.txt").read_text(encoding="utf-8")


def test_a_heads_processes_give_its_raylet_with_the_node_id_and_address_it_registered_with():
    rows = parse_docker_top(HEAD)
    assert [row[0] for row in rows] == [23379, 23530, 23587, 23588, 23591, 23830, 23831, 23879, 23881]
    assert rows[-1] == (23881, "ray::RuntimeEnvAgent")
    assert raylet_of(rows) == Raylet(pid=23831, node_id="b172939baed8fa565a5707f286d055da070f16eb7968c9d0722f7f33", node_ip_address="127.0.0.1")


def test_without_the_raylet_the_client_servers_node_id_is_not_taken():
    # The Ray client server also names the node (--node-id=, with a hyphen): it is not the raylet.
    rows = [row for row in parse_docker_top(HEAD) if "/raylet/raylet " not in row[1]]
    assert any("--node-id=b172939b" in row[1] for row in rows)
    assert raylet_of(rows) is None


def test_a_container_with_no_process_line_has_no_raylet():
    assert raylet_of(parse_docker_top(HEAD.splitlines()[0])) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "its header is PID COMMAND): it starts with ''"),
        ((FIXTURES / "stopped.stderr.txt").read_text(encoding="utf-8"), "it starts with 'Error response from daemon: Container 507896d7"),
        ("PID                 COMMAND\nray::IDLE\n", "a process line of `docker top` without a PID: 'ray::IDLE'"),
    ],
)
def test_what_is_not_docker_tops_output_is_refused(text, message):
    with pytest.raises(DockerTopParseError, match=None) as raised:
        parse_docker_top(text)
    assert message in str(raised.value)
