"""A fleet of two clusters on the converged pair's nodes, regrouped as two one-node clusters (each its own head, server,
port and API key, beside the pair's server), brought up by one site.yml and changed by rollout.yml one cluster at a time:

1. site.yml serves both clusters, each a cluster of one node with no fabric address: no fabric is configured or checked,
   and the second's ConnectX-7 stand-in, read as a Spark's sysfs, has its port down, which neither site.yml nor the doctor
   calls an error; status.yml sums up the fleet.
2. A rollout of both clusters in one batch to an image whose vLLM lacks the model's class stops both before their servers
   stop. A node's record of its launches with a variable written into it stops the rollout at the read, before that
   cluster changes; a head lost at the serve stage is named by its batch's reporter.
3. A rollout to a new image; on the second cluster the change is a new build under the name it serves (the tag moved)
   and the Ray executor, which fails after its server stopped (the CPU build refuses Ray) once Ray was started: the first
   cluster serves the change; the second is put back on the build it served, by its ID, with Ray removed again, and
   serves again. Then the second's change passes its gate but not its benchmark floor: the record forgets it, and it is
   put back as its record says it served, with Ray (which no lab launch can write: the record is made to say so), which
   fails too: the cluster is said to be down.
4. The re-run after the fix changes the second cluster only, and prunes the images nothing else holds.

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
# The second cluster's own variables: its nodes, its image's name, and the node image's Spark-shaped RoCE sysfs with no socket
# fallback, as on a real Spark (its ConnectX-7 stand-in's port is down in the fleet).
FLEET_B = {
    "sparkinfer_cluster_hosts": ["e2e-spark-2"],
    "vllm_image_name": MOVING,
    "nccl_network_sysfs_root": "/run/sparkinfer-lab/sysfs",
    "nccl_network_allow_socket_fallback": False,
}
# The halves of port 1 of the ConnectX-7 stand-in (their peers' links: down, the twins lose their carrier, as uncabled).
PORT_1_PEERS = ("enp1s0f1np1-x", "enP2p1s0f1np1-x")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """The fleet's inventory: the lab's group_vars and the nodes' host_vars, a group per cluster; its images on both nodes."""
    directory = tmp_path_factory.mktemp("fleet")
    (directory / "group_vars").mkdir()
    (directory / "group_vars" / "sparkinfer_nodes.yml").symlink_to(REPO / "inventories" / "lab" / "group_vars" / "sparkinfer_nodes.yml")
    # The nodes' own values, without the pair's fabric addresses: a cluster of one node has none.
    (directory / "host_vars").mkdir()
    for host in FLEET:
        values = yaml.safe_load((REPO / "extensions" / "molecule" / "e2e" / "host_vars" / f"{host}.yml").read_text(encoding="utf-8"))
        values.pop("nccl_network_fabric_addresses")
        (directory / "host_vars" / f"{host}.yml").write_text(yaml.safe_dump(values), encoding="utf-8")
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
    node("e2e-spark-2").check_output(f"docker tag {LATEST} {MOVING} && " + " && ".join(f"ip link set {peer} down" for peer in PORT_1_PEERS))
    yield directory
    node("e2e-spark-2").check_output(" && ".join(f"ip link set {peer} up" for peer in PORT_1_PEERS))
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


def test_fleet_1_one_site_run_serves_both_clusters_without_a_fabric_and_status_sums_up_the_fleet(fleet):
    run = fleet_run(fleet, "site.yml")
    assert run.code == 0, run.output[-3000:]
    for host in FLEET:
        assert f"Cluster of {host} (1 node): serving" in run.output, run.output[-3000:]
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    assert "Fleet of 2 clusters - 2 serving, 0 degraded, 0 down" in run.output
    # No fabric: said, with how each node's ConnectX-7 stands (the lab machine's sysfs has none; the stand-in's port is down).
    said = " ".join(run.output.split())
    skipped = "is a cluster of one node: it needs no fabric, so none was configured or checked (no netplan, no ping, no bandwidth test)"
    assert f"e2e-spark-1 {skipped}, and its ConnectX-7 is no error here (ConnectX-7 port 1 has no RoCE HCA in sysfs" in said, run.output[-3000:]
    assert (
        f"e2e-spark-2 {skipped}, and its ConnectX-7 is no error here (ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), "
        "roceP2p1s0f1 (enP2p1s0f1np1) DOWN (Disabled); no port is up)"
    ) in said
    for host in FLEET:
        env = node(host).check_output("cat /etc/sparkinfer/nccl.env")
        assert ("VLLM_HOST_IP=127.0.0.1" in env.splitlines(), "NCCL_SOCKET_IFNAME=lo" in env.splitlines()) == (True, True), env
    # The doctor on the second cluster: its down port is no error.
    doctor = timed("doctor.yml", {"sparkinfer_targets": "e2e-spark-2"}, inventory=str(fleet / "hosts.yml"))
    assert (
        "ok fabric e2e-spark-2 no fabric needed: a cluster of one node: its ranks use lo 127.0.0.1; ConnectX-7 port 1: "
        "rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), roceP2p1s0f1 (enP2p1s0f1np1) DOWN (Disabled); no port is up"
    ) in doctor.output, doctor.output[-3000:]
    assert not re.search(r"(ERROR|WARNING) fabric ", doctor.output), doctor.output[-3000:]
    print(f"site.yml on the fleet: {run.seconds} s; doctor.yml on one cluster: {doctor.seconds} s")


def test_fleet_2_a_batch_of_both_clusters_to_an_image_without_the_models_class_stops_both_before_their_servers_stop(fleet):
    before = {host: started_at(host) for host in FLEET}
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NO_CLASS, "sparkinfer_rollout_clusters_per_batch": 2})
    set_vars(fleet, "fleet_b", {**FLEET_B, "vllm_image_name": NO_CLASS})
    try:
        run = fleet_run(fleet, "rollout.yml")
    finally:
        set_vars(fleet, "fleet_b", FLEET_B)
    assert run.code == 2, run.output[-3000:]
    said = " ".join(run.output.split())
    assert "Rolling out to 2 cluster(s), 2 at a time: e2e-spark-1, then e2e-spark-2." in said, run.output[-3000:]
    # Each cluster of the batch is judged, and says so; neither server was stopped, and nothing is left to touch.
    for host in FLEET:
        assert (
            f"The rollout stopped at the cluster of {host} ({host}): image failed on {host} (Gate | Inspect the image, and refuse it "
            f"when it lacks the model's classes or what the executor needs): {NO_CLASS} (vLLM 0.32.0) has no Qwen3MoeForCausalLM"
        ) in said, run.output[-3000:]
    # Each cluster's head says what became of its own server.
    stops = said.split("The rollout stopped at the cluster of ")[1:]
    for host in FLEET:
        own = [stop for stop in stops if stop.startswith(f"{host} ({host}): image failed on {host} ")]
        said_of_it = "Its server was not stopped: it still serves what it served before. Changed and serving the change: none. Not touched: none."
        assert any(said_of_it in stop for stop in own), run.output[-3000:]
    assert {host: started_at(host) for host in FLEET} == before
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    record("fleet: a batch of two to an image without the model's class", run.seconds, 120, "rollout.yml: vllm_image gate on both clusters")


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
    assert "TASK [Remove the images each node served before" not in run.output
    assert {host: started_at(host) for host in FLEET} == before
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    record("fleet: a record of launches tampered on a node", run.seconds, 120, "rollout.yml: refused at the read, nothing changed")


def test_fleet_2c_a_head_that_stops_answering_while_serving_is_named_by_its_batch_s_reporter(fleet):
    # From the serve stage on, Ansible's connection to e2e-spark-1 finds no container, as SSH finds no host once a Spark
    # is lost: its address follows the rollout's stage (with pipelining off, for the run, a failed connection is one, not a
    # module's failure). Unvalidated: the validation launch is not what this is about.
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NEW, "sparkinfer_rollout_validate": False})
    host_vars = fleet / "host_vars" / "e2e-spark-1.yml"
    kept = host_vars.read_text(encoding="utf-8")
    lost = "(__rollout_stage | default('')) == 'serve'"
    host_vars.write_text(
        kept + yaml.safe_dump({"ansible_host": f"{{{{ 'e2e-spark-1-lost' if {lost} else 'e2e-spark-1' }}}}", "ansible_pipelining": False}),
        encoding="utf-8",
    )
    before = {host: started_at(host) for host in FLEET}
    try:
        run = fleet_run(fleet, "rollout.yml")
    finally:
        host_vars.write_text(kept, encoding="utf-8")
    assert run.code != 0, run.output[-3000:]
    assert re.search(r"fatal: \[e2e-spark-1\]: UNREACHABLE", run.output), run.output[-3000:]
    assert (
        "The rollout stopped at the cluster of e2e-spark-1 (e2e-spark-1): e2e-spark-1 stopped answering at the serve stage, so "
        "nothing could be put back or checked there: its server may have been stopped for the relaunch, so it may be down. "
        "Changed and serving the change: none. Not touched: e2e-spark-2. Once e2e-spark-1 answers again, run doctor.yml"
    ) in " ".join(run.output.split()), run.output[-3000:]
    # No later batch started, and no image was removed.
    assert not re.search(r"(ok|changed|fatal): \[e2e-spark-2\]", rolled_out(run)), run.output[-3000:]
    assert "TASK [Remove the images each node served before" not in run.output
    # Lost before its first task of the serve stage: the server was never stopped.
    assert {host: started_at(host) for host in FLEET} == before
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (LATEST, MOVING)
    record("fleet: a head lost while serving", run.seconds, 180, "rollout.yml: the batch's reporter")


def rolled_out(run: Run) -> str:
    """What rollout.yml's play of batches printed."""
    return run.output.split("PLAY [Roll the change out", 1)[1].split("PLAY [Remove the images", 1)[0]


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
    assert "This platform cannot use the Ray executor: use --distributed-executor-backend mp" in run.output, run.output[-3000:]
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


def bench_vars(floor: float, results: Path) -> dict:
    """A benchmark of two short requests at concurrency 1 against a throughput floor, kept under results."""
    return {
        "vllm_serve_bench_min_output_throughput": floor,
        "vllm_serve_bench_concurrencies": [1],
        "vllm_serve_bench_num_prompts": 2,
        "vllm_serve_bench_input_len": 32,
        "vllm_serve_bench_output_len": 8,
        "vllm_serve_bench_results_dir": str(results),
    }


def test_fleet_3b_a_change_under_its_benchmark_floor_is_forgotten_and_ray_is_put_back_as_served_and_a_failed_put_back_is_said(fleet):
    # The second cluster's change: its own name for the new build with the mp executor, under a floor no CPU server reaches.
    benchmarks = fleet / "benchmarks-under-the-floor"
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NEW})
    set_vars(fleet, "fleet_b", {**FLEET_B, "sparkinfer_rollout_validate_min_available_gib": 1000, **bench_vars(100000.0, benchmarks)})
    # It serves the build before by its ID with mp (test 3 put it back so). Its record is made to say the Ray executor, as a
    # cluster's that served with Ray on Sparks would: the lab's CPU build refuses Ray, so no launch of the lab writes that.
    path = f"/etc/sparkinfer/{CONTAINER}.inputs.json"
    kept = kept_inputs("e2e-spark-2")
    served_id = kept["current"]["vllm_serve_image"]
    with_ray = {**kept, "current": {**kept["current"], "vllm_serve_executor": "ray"}}
    node("e2e-spark-2").check_output(f"printf '%s' {shlex.quote(json.dumps(with_ray))} > {path}")
    run = fleet_run(fleet, "rollout.yml")
    assert run.code == 2, run.output[-3000:]
    said = " ".join(run.output.split())
    assert recap_changed(run.output, "e2e-spark-1") == 0, run.output[-3000:]
    # The change served, gated and smoke-tested, then fell short of its floor; the failed benchmark is kept.
    assert re.search(
        r"The rollout stopped at the cluster of e2e-spark-2 \(e2e-spark-2\): benchmark failed on e2e-spark-2 \(Benchmark \| Fail with what the "
        r"benchmark said\): output token throughput [0-9.]+ tok/s at concurrency 1 is below the floor of 100000 tok/s",
        said,
    ), run.output[-3000:]
    results = [json.loads(kept_result.read_text(encoding="utf-8")) for kept_result in (benchmarks / "e2e-spark-2").glob("*.json")]
    assert [(result["passed"], result["image"], result["results"][0]["completed"]) for result in results] == [(False, MOVING, 2)]
    # Put back as it served: Ray started again on the build before; then vLLM refused Ray, so the cluster is down, and said so.
    assert re.search(rf"Putting it back on {re.escape(served_id)} failed too, so it is down: .{{0,200}}current platform cpu does not support ray", said), (
        run.output[-3000:]
    )
    assert "Changed and serving the change: e2e-spark-1. Not touched: none." in said
    assert node("e2e-spark-2").check_output("docker inspect --format '{{.Image}} {{.State.Running}}' sparkinfer-ray") == f"{served_id} true"
    assert node("e2e-spark-2").run(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}").stdout.strip() != "true"
    # The record names what served before the change, not the change: a re-run changes the cluster and benchmarks it again.
    after = kept_inputs("e2e-spark-2")
    assert (after["current"], after["previous"], after["image_ids"]) == (with_ray["current"], kept["previous"], kept["image_ids"])
    assert after["images"] == [*kept["images"], *[image for image in [MOVING] if image not in kept["images"]]]
    record("fleet: under its benchmark floor, put back on Ray, which fails", run.seconds, 900, "vllm_bench_serve: floor; restore failure")


def test_fleet_4_the_rerun_after_the_fix_changes_the_cluster_left_only_benchmarks_it_and_prunes_what_nothing_else_holds(fleet):
    # The fix: the fleet's image under the fleet's name, its floor met, and no image kept before the one served (what
    # a container uses, or a build recorded by its ID that still has a name, stays all the same).
    benchmarks = fleet / "benchmarks"
    set_vars(fleet, "lab_fleet", {**FLEET_VARS, "vllm_image_name": NEW, "vllm_serve_keep_images": 0})
    set_vars(
        fleet,
        "fleet_b",
        {**{name: value for name, value in FLEET_B.items() if name != "vllm_image_name"}, "sparkinfer_rollout_validate_min_available_gib": 1000}
        | bench_vars(0.01, benchmarks),
    )
    served_id = kept_inputs("e2e-spark-2")["current"]["vllm_serve_image"]
    run = fleet_run(fleet, "rollout.yml")
    assert run.code == 0, run.output[-3000:]
    assert (recap_changed(run.output, "e2e-spark-1"), recap_changed(run.output, "e2e-spark-2") > 0) == (0, True), run.output[-3000:]
    kept = sorted((benchmarks / "e2e-spark-2").glob("*.json"))
    assert len(kept) == 1, run.output[-3000:]
    # Readable by the admin box's user only, as the API key.
    assert (stat.S_IMODE((benchmarks / "e2e-spark-2").stat().st_mode), stat.S_IMODE(kept[0].stat().st_mode)) == (0o700, 0o600)
    result = json.loads(kept[0].read_text(encoding="utf-8"))
    assert (result["passed"], result["image"], result["results"][0]["completed"]) == (True, NEW, 2)
    assert (serving_image("e2e-spark-1"), serving_image("e2e-spark-2")) == (NEW, NEW)
    # Ray, which the failed put-back started, is gone with the mp executor.
    assert "sparkinfer-ray" not in node("e2e-spark-2").check_output("docker ps -a --format '{{.Names}}'").split()
    # Pruned: the second cluster's own name for the new build goes (the fleet's name keeps the build); the build it
    # served by ID stays, for the pair's worker rank uses it (and it is named latest); the first cluster's image before
    # stays, for the pair's head rank uses it. The fleet never served the refused one.
    assert node("e2e-spark-2").run(f"docker image inspect {MOVING}").rc == 1
    assert kept_inputs("e2e-spark-2")["images"] == [NEW, served_id]
    assert kept_inputs("e2e-spark-1")["images"] == [NEW, LATEST]
    for host in FLEET:
        assert node(host).run(f"docker image inspect {LATEST}").rc == 0
    status = fleet_run(fleet, "status.yml")
    assert "Fleet of 2 clusters - 2 serving, 0 degraded, 0 down" in status.output, status.output[-3000:]
    print(f"rollout.yml re-run: {run.seconds} s; status.yml: {status.seconds} s")
