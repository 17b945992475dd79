"""Tasks whose result holds a container's or an image's environment (Config.Env) are no_log: -v prints every result.

An image's or container's environment may carry a token (HF_TOKEN, the API key the rank's file gives the container), and
community.docker's info, pull and load modules return the whole inspect; so does `docker inspect` of .Config.Env.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1].parent
TASK_FILES = sorted([*REPO.glob("roles/*/tasks/*.yml"), *REPO.glob("playbooks/*.yml"), *REPO.glob("playbooks/tasks/*.yml")])
# The modules that return an inspect, environment included, whatever their arguments.
RETURN_AN_INSPECT = {
    "community.docker.docker_image_info",
    "community.docker.docker_container_info",
    "community.docker.docker_image_pull",
    "community.docker.docker_image_load",
}


def tasks_of(items) -> Iterator[dict]:
    for item in items or []:
        if not isinstance(item, dict):
            continue
        yield item
        for section in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from tasks_of(item.get(section))


def returns_an_environment(task: dict) -> bool:
    if RETURN_AN_INSPECT & set(task):
        return True
    # docker_container returns the container's inspect unless it removes it.
    container = task.get("community.docker.docker_container")
    if isinstance(container, dict) and container.get("state") != "absent":
        return True
    command = task.get("ansible.builtin.command")
    argv = command.get("argv", []) if isinstance(command, dict) else []
    return "inspect" in argv and not any(".State" in str(item) or ".Id" in str(item) for item in argv)


def inspecting_tasks() -> list[tuple[str, str, object]]:
    found = []
    for path in TASK_FILES:
        for task in tasks_of(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if returns_an_environment(task):
                found.append((str(path.relative_to(REPO)), task.get("name", "?"), task.get("no_log")))
    return found


def test_the_collection_has_such_tasks():
    assert len(inspecting_tasks()) >= 10


@pytest.mark.parametrize(("path", "name", "no_log"), inspecting_tasks(), ids=lambda value: str(value)[:60])
def test_a_task_that_returns_an_environment_is_no_log(path, name, no_log):
    assert no_log is True, f"{path}: '{name}' returns an inspect with the environment: set no_log: true"
