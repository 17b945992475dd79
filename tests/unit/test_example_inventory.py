"""The worked inventories pass validate_inventory.yml: example-two-sparks, whose recipe on one Spark is refused before any
host changes, and example-one-spark (gpt-oss-120b on one Spark, no fabric).

validate_inventory.yml touches no host (no facts, only the controller's checks), so it runs here on the worked inventory.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from .controller_playbook import REPO, run_controller_playbook

EXAMPLE = REPO / "inventories" / "example-two-sparks"
ONE_SPARK = REPO / "inventories" / "example-one-spark"


def validate(*args: str, inventory: Path = EXAMPLE) -> subprocess.CompletedProcess:
    return run_controller_playbook("validate_inventory.yml", inventory, *args)


def test_the_worked_two_spark_inventory_passes_the_specs_and_its_recipe_fits():
    run = validate()
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # One task, run once for the whole inventory (a fleet of hundreds validates in seconds).
    assert "spark-a                    : ok=1    changed=0" in run.stdout


def test_its_recipe_on_one_spark_is_refused_by_the_memory_plan_before_any_host_changes():
    run = validate("--limit", "spark-a", "-e", '{"sparkinfer_cluster_hosts": ["spark-a"]}')
    assert run.returncode == 2, run.stdout[-3000:]
    said = " ".join(run.stdout.split())
    assert (
        "The inventory has invalid values: spark-a: recipe qwen3.5-122b-a10b-fp8 is served on 2 Sparks (tensor x pipeline parallel size 2); "
        "the cluster has 1 (spark-a)."
    ) in said
    assert "KV -36.28 GiB, no room for a KV cache. Fix: serve it across 2 nodes like spark-a with --tensor-parallel-size 2" in said
    assert "nothing was changed on any host." in said


def test_the_disk_check_is_the_workers_alone_as_real_sparks_says():
    # gb10_host checks the model directory's filesystem before the copy: the head already holds the model there.
    hosts = yaml.safe_load((EXAMPLE / "hosts.yml").read_text(encoding="utf-8"))["all"]["children"]["sparkinfer_nodes"]["children"]
    group_vars = yaml.safe_load((EXAMPLE / "group_vars" / "sparkinfer_nodes.yml").read_text(encoding="utf-8"))
    assert "gb10_host_required_disk_free_gib" not in group_vars
    assert "gb10_host_required_disk_free_gib" not in hosts["sparkinfer_head"]["hosts"]["spark-a"]
    assert hosts["sparkinfer_workers"]["hosts"]["spark-b"]["gb10_host_required_disk_free_gib"] == 150


def test_the_worked_one_spark_inventory_passes_the_specs_and_its_recipe_fits_one_node():
    run = validate(inventory=ONE_SPARK)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "spark-a                    : ok=1    changed=0" in run.stdout
    group_vars = yaml.safe_load((ONE_SPARK / "group_vars" / "sparkinfer_nodes.yml").read_text(encoding="utf-8"))
    assert group_vars["sparkinfer_recipe"] == "gpt-oss-120b"
    # No fabric to fill in: a cluster of one node has none.
    assert "nccl_network_fabric_addresses" not in (ONE_SPARK / "hosts.yml").read_text(encoding="utf-8")


def test_misspelt_variables_stop_it_before_any_host_changes_naming_the_ones_meant():
    # Tried as a new user would (the issue on the plan in Python): each was ignored silently before.
    run = validate("-e", '{"nccl_network_fabric_adresses": ["192.168.100.10/24"], "sparkinfer_recipie": "gpt-oss-120b"}')
    assert run.returncode == 2, run.stdout[-3000:]
    said = " ".join(run.stdout.split())
    assert "spark-a: nccl_network_fabric_adresses is no variable" in said
    assert "spark-b: nccl_network_fabric_adresses is no variable" in said
    assert "nccl_network_fabric_adresses is no variable of the collection (did you mean nccl_network_fabric_addresses?)" in said
    assert "sparkinfer_recipie is no variable of the collection (did you mean sparkinfer_recipe?)" in said
    assert "nothing was changed on any host" in said


def test_a_head_group_moved_out_of_sparkinfer_nodes_is_refused_naming_the_head(tmp_path):
    # The head's group beside sparkinfer_nodes instead of among its children: the plays would deploy the worker alone.
    hosts = yaml.safe_load((EXAMPLE / "hosts.yml").read_text(encoding="utf-8"))
    children = hosts["all"]["children"]
    children["sparkinfer_head"] = children["sparkinfer_nodes"]["children"].pop("sparkinfer_head")
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(hosts), encoding="utf-8")
    (tmp_path / "group_vars").symlink_to(EXAMPLE / "group_vars")
    run = validate(inventory=tmp_path / "hosts.yml")
    assert run.returncode == 2, run.stdout[-3000:]
    said = " ".join(run.stdout.split())
    assert "The inventory has invalid values: spark-a is in sparkinfer_head but not in sparkinfer_nodes" in said, said[-3000:]
    assert "spark-a : ok=" not in said


def test_a_fabric_address_without_its_prefix_length_stops_it_before_any_host_changes():
    # Caught by nccl_network's preflight in play 3 before, after host.yml had changed the hosts: the same rule, here first.
    run = validate("-e", '{"nccl_network_fabric_addresses": ["192.168.177.11", "192.168.178.11/24"]}')
    assert run.returncode == 2, run.stdout[-3000:]
    said = " ".join(run.stdout.split())
    assert (
        "The inventory has invalid values: spark-a: nccl_network_fabric_addresses on spark-a holds 192.168.177.11; each entry must be an "
        "IPv4 address with its prefix length"
    ) in said
    assert "nothing was changed on any host" in said


def test_a_gpu_memory_utilization_over_one_stops_it_before_any_host_changes():
    # Caught in play 6 by the memory plan before, after the image and model copies.
    run = validate("-e", '{"vllm_serve_gpu_memory_utilization": 1.5}')
    assert run.returncode == 2, run.stdout[-3000:]
    said = " ".join(run.stdout.split())
    assert (
        "The inventory has invalid values: spark-a: vllm_serve_gpu_memory_utilization is 1.5: gpu_memory_utilization "
        "(--gpu-memory-utilization) must be a number in (0, 1]."
    ) in said, said[-3000:]


def test_a_recipe_name_no_recipe_has_is_said_plainly_with_the_recipes_there_are():
    # Refused before as a "Finalization of task args ... <<< caused by >>>" stack.
    run = validate("-e", "sparkinfer_recipe=qwen-nope")
    assert run.returncode == 2, run.stdout[-3000:]
    said = " ".join(run.stdout.split())
    assert (
        "The inventory has invalid values: spark-a: sparkinfer_recipe is 'qwen-nope': no recipe is named 'qwen-nope'; the collection's "
        "recipes are gpt-oss-120b, "
    ) in said
    assert "nothing was changed on any host." in said
    assert "Finalization of task args" not in said
