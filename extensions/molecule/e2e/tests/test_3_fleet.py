"""A fleet of two clusters on the converged pair's nodes, regrouped as two one-node clusters (each its own head, server,
port and API key, beside the pair's server), brought up by one site.yml and changed by rollout.yml one cluster at a time:

1. site.yml serves both clusters; status.yml sums up the fleet.
2. A rollout to an image whose vLLM lacks the model's class stops at the first cluster before its server stops; the
   second is never touched. A node's record of its launches with a variable written into it stops the rollout at the
   read, before that cluster changes.
3. A rollout to a new image; on the second cluster the change is a new build under the name it serves (the tag moved)
   and the Ray executor, which fails after its server stopped (the CPU build refuses Ray) once Ray was started: the first
   cluster serves the change; the second is put back on the build it served, by its ID, with Ray removed again, and
   serves again.
4. The re-run after the fix changes the second cluster only.

The tests run in file order, each on what the one before left; the end removes the fleet's servers and images.
"""

from __future__ import annotations

import json
import re
import shlex
import stat
import urllib.request
from pathlib import Path

import pytest
import yaml
from chain_lab import REPO, Run, assert_rendezvous_guarded, node, pair, record, timed

FLEET = {"e2e-spark-1": "fleet_a", "e2e-spark-2": "fleet_b"}
CONTAINER = "sparkinfer-fleet"
PORT = 8021
LATEST = "sparkinfer-lab-vllm:latest"
# The lab image with one label more: a new image of the same vLLM.
NEW = "sparkinfer-lab-vllm:fleet-new"
# The lab image with Qwen3MoeForCausalLM struck from vLLM's model registry: an image that lacks the model's class.
NO_CLASS = "sparkinfer-lab-vllm:fleet-no-qwen3moe"
# The second cluster's own name for its image: the lab image at first, then moved to the new build (step 3).
MOVING = "sparkinfer-lab-vllm:fleet-b"
REGISTRY = "/opt/vllm/lib/python3.11/site-packages/vllm/model_executor/models/registry.py"
# What every cluster of the fleet serves: the lab's model on one node, without the lab's two-node recipe.
FLEET_VARS = {
    "sparkinfer_recipe": "",
    "vllm_image_name": LATEST,
    "vllm_image_model_path": "/opt/sparkinfer/models/tiny-qwen3-moe",
    "vllm_serve_container_name": CONTAINER,
    "vllm_serve_port": PORT,
    "vllm_serve_tensor_parallel_size": 1,
    "vllm_serve_pipeline_parallel_size": 1,
    "vllm_serve_max_model_len": 512,
    # One pipeline stage: eager is allowed on the CPU build, and spares each launch its compilation.
    "vllm_serve_enforce_eager": True,
    "vllm_serve_extra_env": {"VLLM_CPU_KVCACHE_SPACE": "1"},
    "vllm_serve_expect": {"architecture": "Qwen3MoeForCausalLM", "quantization": None},
}
# The second cluster's own variables: its nodes, its image's name.
FLEET_B = {"sparkinfer_cluster_hosts": ["e2e-spark-2"], "vllm_image_name": MOVING}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """The fleet's inventory: the lab's group_vars and the nodes' host_vars, a group per cluster; its images on both nodes."""
    directory = tmp_path_factory.mktemp("fleet")
    (directory / "group_vars").mkdir()
    (directory / "group_vars" / "sparkinfer_nodes.yml").symlink_to(REPO / "inventories" / "lab" / "group_vars" / "sparkinfer_nodes.yml")
    (directory / "host_vars").symlink_to(REPO / "extensions" / "molecule" / "e2e" / "host_vars")
    clusters = {group: {"hosts": {host: {"ansible_connection": "community.docker.docker"}}} for host, group in FLEET.items()}
    hosts = {"all": {"children": {"sparkinfer_nodes": {"children": {"lab_fleet": {"children": clusters}}}, "sparkinfer_head": {"hosts": dict.fromkeys(FLEET)}}}}
    (directory / "hosts.yml").write_text(yaml.safe_dump(hosts), encoding="utf-8")
    set_vars(directory, "lab_fleet", FLEET_VARS)
    set_vars(directory, "fleet_a", {"sparkinfer_cluster_hosts": ["e2e-spark-1"]})
    set_vars(directory, "fleet_b", FLEET_B)
    for host in FLEET:
        node(host).check_output(
            f"printf 'FROM {LATEST}\\nLABEL org.sparkinfer.lab=fleet-new\\n' | docker build -q -t {NEW} - && "
            f"printf 'FROM {LATEST}\\nRUN sed -i /Qwen3MoeForCausalLM.:/d {REGISTRY}\\n' | docker build -q -t {NO_CLASS} -"
        )
    node("e2e-spark-2").check_output(f"docker tag {LATEST} {MOVING}")
    yield directory
    removed = timed("serve.yml", {"vllm_serve_state": "absent"}, inventory=str(directory / "hosts.yml"))
    for host in FLEET:
        node(host).run(f"docker rmi {NEW} {NO_CLASS} {MOVING}")
    for kept in ("e2e-spark-2-vllm-api-key", "e2e-spark-2-ray-auth-token"):
        (Path.home() / ".config" / "sparkinfer" / kept).unlink(missing_ok=True)
    assert removed.code == 0, removed.output[-3000:]


def set_vars(directory: Path, group: str, values: dict) -> None:
    (directory / "group_vars" / f"{group}.yml").write_text(yaml.safe_dump(values), encoding="utf-8")


def fleet_run(fleet: Path, playbook: str) -> Run:
    return timed(playbook, inventory=str(fleet / "hosts.yml"))


def started_at(host: str) -> str:
    return node(host).check_output(f"docker inspect --format '{{{{.State.StartedAt}}}}' {CONTAINER}")


def image_id(host: str, image: str) -> str:
    return node(host).check_output(f"docker image inspect --format '{{{{.Id}}}}' {image}")


def serving_image(host: str) -> str:
    """The image of the cluster's running server, once its API has answered a chat completion with its head's key."""
    address = pair().head_ip if host == pair().head else pair().worker_ip
    key = (Path.home() / ".config" / "sparkinfer" / f"{host}-vllm-api-key").read_text(encoding="utf-8").split()[0]
    body = json.dumps({"model": "tiny-qwen3-moe", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 4}).encode()
    request = urllib.request.Request(
        f"http://{address}:{PORT}/v1/chat/completions", data=body, headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert json.load(response)["usage"]["completion_tokens"] > 0
    return node(host).check_output(f"docker inspect --format '{{{{.Config.Image}}}}' {CONTAINER}")


def kept_inputs(host: str) -> dict:
    return json.loads(node(host).check_output(f"cat /etc/sparkinfer/{CONTAINER}.inputs.json"))


def recap_changed(output: str, host: str) -> int:
    return int(re.search(rf"{host} *: ok=\d+ +changed=(\d+) ", output).group(1))


def test_fleet_1_one_site_run_serves_both_clusters_and_status_sums_up_the_fleet(fleet):
    run = fleet_run(fleet, "site.yml")
    assert run.code == 0, run.output[-3000:]
    for host in FLEET:
        assert f"Cluster of {host} (1 node): serving" in run.output, run.output[-3000:]
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    assert "Fleet of 2 clusters - 2 serving, 0 degraded, 0 down" in run.output
    print(f"site.yml on the fleet: {run.seconds} s")


def test_fleet_2_a_rollout_to_an_image_without_the_models_class_stops_at_the_first_cluster_before_its_server_stops(fleet):
    before = {host: started_at(host) for host in FLEET}
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NO_CLASS})
    run = fleet_run(fleet, "rollout.yml")
    assert run.code == 2, run.output[-3000:]
    assert (
        "The rollout stopped at the cluster of e2e-spark-1 (e2e-spark-1): image failed on e2e-spark-1 (Gate | Inspect the image, and refuse it "
        f"when it lacks the model's classes or what the executor needs): {NO_CLASS} (vLLM 0.32.0) has no Qwen3MoeForCausalLM"
    ) in run.output, run.output[-3000:]
    assert "Its server was not stopped: it still serves what it served before. Changed and serving the change: none. Not touched: e2e-spark-2." in run.output
    # The second cluster's batch never started.
    assert "[e2e-spark-2]" not in run.output.split("PLAY [Roll the change out", 1)[1], run.output[-3000:]
    assert {host: started_at(host) for host in FLEET} == before
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    record("fleet: rollout to an image without the model's class", run.seconds, 120, "rollout.yml: vllm_image gate on the first cluster")


def test_fleet_2b_a_record_of_launches_a_node_wrote_more_into_stops_the_rollout_before_the_cluster_changes(fleet):
    # Root on a node adds a variable to its record: were it set on a rollback, the admin run's next tasks would run locally.
    path = f"/etc/sparkinfer/{CONTAINER}.inputs.json"
    kept = kept_inputs("e2e-spark-1")
    tampered = {**kept, "current": {**kept["current"], "ansible_connection": "local"}}
    node("e2e-spark-1").check_output(f"cp -p {path} {path}.kept && printf '%s' {shlex.quote(json.dumps(tampered))} > {path}")
    before = {host: started_at(host) for host in FLEET}
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NEW})
    try:
        run = fleet_run(fleet, "rollout.yml")
    finally:
        node("e2e-spark-1").check_output(f"mv {path}.kept {path}")
    assert run.code == 2, run.output[-3000:]
    assert (
        f"The record of e2e-spark-1's launches ({CONTAINER}.inputs.json in /etc/sparkinfer) holds what vllm_serve never writes there: "
        "current.ansible_connection (not an input the collection writes). No variable is set from it, and nothing of this cluster was changed."
    ) in " ".join(run.output.split()), run.output[-3000:]
    assert "PLAY [Remove the images" not in run.output
    assert {host: started_at(host) for host in FLEET} == before
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    record("fleet: a record of launches tampered on a node", run.seconds, 120, "rollout.yml: refused at the read, nothing changed")


def test_fleet_3_a_change_that_fails_after_the_stop_is_put_back_on_the_build_it_served_and_the_cluster_before_keeps_the_change(fleet):
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NEW})
    # The second cluster: a new build under the name it serves, and the Ray executor; its head as a Spark whose server
    # leaves no room for a validation beside it.
    served_id, moved_id = image_id("e2e-spark-2", MOVING), image_id("e2e-spark-2", NEW)
    node("e2e-spark-2").check_output(f"docker tag {NEW} {MOVING}")
    set_vars(fleet, "fleet_b", {**FLEET_B, "vllm_serve_executor": "ray", "sparkinfer_rollout_validate_min_available_gib": 1000})
    before = started_at("e2e-spark-2")
    run = fleet_run(fleet, "rollout.yml")
    assert run.code == 2, run.output[-3000:]
    # The first cluster: validated on its head beside its server (validate_single_node.yml's check), which left nothing
    # running and the pair's rendezvous chain as it was; then changed.
    validated = re.search(
        rf"Validated on e2e-spark-1: {re.escape(NEW)} \(vLLM 0\.32\.0\) resolves Qwen3MoeForCausalLM, quantization None, in [0-9.]+ s", run.output
    )
    assert validated, run.output[-3000:]
    assert sorted(node("e2e-spark-1").check_output("docker ps -a --format '{{.Names}}'").split()) == [CONTAINER, "sparkinfer-vllm"]
    assert_rendezvous_guarded()
    assert serving_image("e2e-spark-1") == NEW
    # The second, only after the first was done: no room to validate, said; Ray started, then vLLM's launch refused it.
    assert "e2e-spark-2 has " in run.output[validated.end() :]
    assert "less than the 1000.0 GiB a validation needs (sparkinfer_rollout_validate_min_available_gib): the change is not validated first" in run.output
    assert "vLLM failed (bad_argument): ValueError: current platform cpu does not support ray." in run.output, run.output[-3000:]
    assert "The rollout stopped at the cluster of e2e-spark-2 (e2e-spark-2): serve failed on e2e-spark-2" in run.output
    assert (
        f"It was put back on the build of {MOVING} it served before, {served_id[7:19]} (the name now stands for {moved_id[7:19]}) "
        "and the serve spec it had before, and serves again (gated and smoke-tested). Changed and serving the change: e2e-spark-1. Not touched: none."
    ) in " ".join(run.output.split()), run.output[-3000:]
    # Put back: a new server on the build it served before, by its ID, with the mp executor and without the Ray the
    # change started.
    assert started_at("e2e-spark-2") != before
    assert serving_image("e2e-spark-2") == served_id
    assert node("e2e-spark-2").check_output(f"docker inspect --format '{{{{.Image}}}}' {CONTAINER}") == served_id
    assert "sparkinfer-ray" not in node("e2e-spark-2").check_output("docker ps -a --format '{{.Names}}'").split()
    assert node("e2e-spark-2").run("iptables -S SPARKINFER-RAY").rc != 0
    assert (kept_inputs("e2e-spark-1")["current"]["vllm_serve_image"], kept_inputs("e2e-spark-1")["previous"]["vllm_serve_image"]) == (NEW, LATEST)
    kept = kept_inputs("e2e-spark-2")
    assert (kept["current"]["vllm_serve_image"], kept["current"]["vllm_serve_executor"], kept["image_ids"]["current"]) == (served_id, "mp", served_id)
    record("fleet: a change failing after the stop, put back", run.seconds, 900, "vllm_wait: bad_argument (Ray on the CPU build), restored by image ID")


def test_fleet_4_the_rerun_after_the_fix_changes_the_cluster_left_only_benchmarks_it_and_keeps_one_image_before(fleet):
    # The fix, and a throughput floor for the second cluster: its new server is benchmarked before the rollout goes on.
    benchmarks = fleet / "benchmarks"
    set_vars(
        fleet,
        "fleet_b",
        {
            **FLEET_B,
            "sparkinfer_rollout_validate_min_available_gib": 1000,
            "vllm_serve_bench_min_output_throughput": 0.01,
            "vllm_serve_bench_concurrencies": [1],
            "vllm_serve_bench_num_prompts": 2,
            "vllm_serve_bench_input_len": 32,
            "vllm_serve_bench_output_len": 8,
            "vllm_serve_bench_results_dir": str(benchmarks),
        },
    )
    run = fleet_run(fleet, "rollout.yml")
    assert run.code == 0, run.output[-3000:]
    assert (recap_changed(run.output, "e2e-spark-1"), recap_changed(run.output, "e2e-spark-2") > 0) == (0, True), run.output[-3000:]
    kept = sorted((benchmarks / "e2e-spark-2").glob("*.json"))
    assert len(kept) == 1, run.output[-3000:]
    # Readable by the admin box's user only, as the API key.
    assert (stat.S_IMODE((benchmarks / "e2e-spark-2").stat().st_mode), stat.S_IMODE(kept[0].stat().st_mode)) == (0o700, 0o600)
    result = json.loads(kept[0].read_text(encoding="utf-8"))
    assert (result["passed"], result["image"], result["results"][0]["completed"]) == (True, MOVING, 2)
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (NEW, MOVING)
    # The image served before stays for a rollback (vllm_serve_keep_images 1), by name or, where the rollback served it
    # after its name moved on, by ID; the fleet never served the refused one.
    assert kept_inputs("e2e-spark-1")["images"] == [NEW, LATEST]
    assert kept_inputs("e2e-spark-2")["images"] == [MOVING, image_id("e2e-spark-2", LATEST)]
    for host in FLEET:
        assert node(host).run(f"docker image inspect {LATEST}").rc == 0
    status = fleet_run(fleet, "status.yml")
    assert "Fleet of 2 clusters - 2 serving, 0 degraded, 0 down" in status.output, status.output[-3000:]
    print(f"rollout.yml re-run: {run.seconds} s; status.yml: {status.seconds} s")
