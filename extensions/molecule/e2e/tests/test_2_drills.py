"""Failure drills on a converged pair: each breaks one thing for real, asserts the diagnosis and the
seconds to detection (from the start of the failing playbook to its end), then restores the pair.

The tests run in file order; the re-run and check drill comes last and proves the restorations.
Each drill's seconds go to the report that bench/drills.py prints. The pair serves with the mp
executor, which runs no Ray; drills 4, 5 and 9 need the Ray cluster (the Ray executor's failure, a
lost Ray worker, Ray's authenticated and firewalled ports), so every drill's playbook run asks for
it (RAY) and the first one starts it.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import socket
import stat
import tarfile
import urllib.error
import urllib.request
from functools import cache

import pytest
from chain_lab import Run, api_key, node, pair, ray_token, record, timed
from probes import connects, connects_from
from prometheus_server import prometheus, targets_once_scraped

MODEL = "/opt/sparkinfer/models/tiny-qwen3-moe"
# A second server on the pair for the drills, beside its own (port 8000).
DRILL_CONTAINER = "sparkinfer-vllm-drill"
CUT_CHAIN = "SPARKINFER-DRILL-CUT"
# A second server on the pair, beside its own (drill 2): another container, port and rendezvous port, and so a
# rendezvous chain of its own (roles/vllm_serve/vars/main.yml).
SECOND_PAIR_SERVER = {"vllm_serve_container_name": DRILL_CONTAINER, "vllm_serve_port": 8014, "vllm_serve_master_port": 29511}
SECOND_PAIR_CHAIN = "SPARKINFER-VLLM" + hashlib.sha1(DRILL_CONTAINER.encode()).hexdigest()[:8].upper()
RAY = {"ray_cluster_state": "started"}


@cache
def admin_address() -> str:
    """The admin box's own address on its way to the head (a UDP socket's connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((pair().head_ip, 9))
        return probe.getsockname()[0]


def drill_run(playbook: str, extra_vars: dict | None = None, *options: str) -> Run:
    """A timed playbook run of a drill, on the pair with its Ray cluster, whose metrics the admin box may scrape."""
    return timed(playbook, {**RAY, "ray_cluster_metrics_scrapers": [admin_address()], **(extra_vars or {})}, *options)


@pytest.fixture(scope="module", autouse=True)
def ray_cluster_started():
    started = drill_run("cluster.yml")
    assert started.code == 0, started.output[-3000:]


def remove_drill_server(*hosts: str) -> None:
    for host in hosts or (pair().head, pair().worker):
        node(host).run(f"docker rm -f {DRILL_CONTAINER}; rm -f /etc/sparkinfer/{DRILL_CONTAINER}.*")


def running_containers(host: str) -> list[str]:
    return sorted(node(host).check_output("docker ps --no-trunc --format '{{.ID}} {{.Names}}'").splitlines())


def test_drill_1_an_image_without_the_models_class_is_refused_before_any_container_starts():
    head = node(pair().head)
    model = "/opt/sparkinfer/models/drill-no-class"
    rewrite = (
        "import json, sys; config = json.load(open(sys.argv[1])); config['architectures'] = ['SparkinferDrillMoeForCausalLM'];"
        " json.dump(config, open(sys.argv[2], 'w'))"
    )
    head.check_output(f"rm -rf {model} && cp -al {MODEL} {model} && rm {model}/config.json")
    head.check_output(f"python3 -c {shlex.quote(rewrite)} {MODEL}/config.json {model}/config.json")
    before = {host: running_containers(host) for host in (pair().head, pair().worker)}
    try:
        run = drill_run("image.yml", {"vllm_image_model_path": model})
        assert run.code == 2, run.output[-3000:]
        assert "sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferDrillMoeForCausalLM; use an image whose vLLM lists it" in run.output, run.output[
            -3000:
        ]
        record("1 image without the model's class", run.seconds, 60, "vllm_image_info: unsupported architecture")
        assert {host: running_containers(host) for host in before} == before
        assert node(pair().worker).run(f"test -e {model}").rc == 1, "the model was copied on although the image was refused"
    finally:
        head.run(f"rm -rf {model}")


def cut_fabric() -> None:
    """Drop everything between the worker and the head's fabric address, in the worker's own firewall."""
    node(pair().worker).check_output(
        f"iptables -N {CUT_CHAIN} && iptables -A {CUT_CHAIN} -s {pair().head_ip} -j DROP && iptables -A {CUT_CHAIN} -d {pair().head_ip} -j DROP"
        f" && iptables -I INPUT -j {CUT_CHAIN} && iptables -I OUTPUT -j {CUT_CHAIN}"
    )


def mend_fabric() -> None:
    node(pair().worker).run(f"iptables -D INPUT -j {CUT_CHAIN}; iptables -D OUTPUT -j {CUT_CHAIN}; iptables -F {CUT_CHAIN}; iptables -X {CUT_CHAIN}")


def test_drill_2_a_fabric_cut_is_named_by_the_fabric_check_and_by_the_vllm_gate_within_the_stall_timeout():
    stall_timeout = 15
    cut_fabric()
    try:
        health = drill_run("network.yml")
        assert health.code == 2, health.output[-3000:]
        assert f"The fabric fails between {pair().head} -> {pair().worker} ({pair().worker_ip}" in health.output, health.output[-3000:]
        record("2a fabric cut: network.yml", health.seconds, 60, "nccl_network: fabric ping")
        # The doctor names the cut both ways, in check mode, changing nothing.
        doctor = drill_run("doctor.yml", {}, "--check")
        assert doctor.code == 2, doctor.output[-3000:]
        for source, target, target_ip in ((pair().head, pair().worker, pair().worker_ip), (pair().worker, pair().head, pair().head_ip)):
            lost = rf"evidence: {source} -> {target} \({re.escape(target_ip)}\): [0-9]+ packets transmitted, 0 received, 100% packet loss"
            assert re.search(rf"ERROR fabric {source} the fabric fails towards {target} {lost}", doctor.output), doctor.output[-3000:]
        assert "then run network.yml" in doctor.output
        assert_changed_nothing(doctor)
        record("2d fabric cut: doctor.yml --check", doctor.seconds, 60, "doctor: fabric ping from every node")

        launch = drill_run("serve.yml", {**SECOND_PAIR_SERVER, "vllm_serve_stall_timeout": stall_timeout})
        assert launch.code == 2, launch.output[-3000:]
        silence = re.search(r"no progress in vLLM's log for ([0-9]+) s after distributed init", launch.output)
        assert silence, launch.output[-3000:]
        assert "Check the fabric between the nodes" in launch.output
        assert f"{pair().head} -> {pair().worker} ({pair().worker_ip}) does not answer over the fabric" in launch.output, launch.output[-3000:]
        # Detected once the ranks have been silent for stall_timeout, not after the gate's whole timeout (1800 s).
        assert stall_timeout <= int(silence.group(1)) <= stall_timeout + 30
        record("2b fabric cut: vLLM gate, silence after distributed init", float(silence.group(1)), stall_timeout + 30, "vllm_wait: stalled")
        # The launch up to distributed init depends on the host's load (249 s on CI's two busy cores): the bound
        # shows the gate gave up long before its own timeout.
        record("2c fabric cut: vLLM gate, whole launch", launch.seconds, 480, "vllm_wait: stalled + fabric ping of each rank")
        # The second server guarded its own rendezvous port in a chain of its own, beside the pair's.
        assert rendezvous_jumps() == {"SPARKINFER-VLLM": "29501", SECOND_PAIR_CHAIN: "29511"}
    finally:
        mend_fabric()
        # Its teardown is the role's own: the ranks, their files, and its chain and boot unit.
        removed = drill_run("serve.yml", {**SECOND_PAIR_SERVER, "vllm_serve_state": "absent"})
    assert removed.code == 0, removed.output[-3000:]
    assert rendezvous_jumps() == {"SPARKINFER-VLLM": "29501"}
    # The fabric is mended (network.yml's own check of it is drill 8's re-run).
    assert connects_from(node(pair().worker), pair().head_ip, 22)


def rendezvous_jumps() -> dict[str, str]:
    """The head's INPUT jumps to vllm_serve's rendezvous chains: chain -> port."""
    rules = node(pair().head).check_output("iptables -S INPUT").splitlines()
    jumps = [re.search(r"--dports (\S+) .*-j (SPARKINFER-VLLM\S*)$", rule) for rule in rules]
    return {jump.group(2): jump.group(1) for jump in jumps if jump}


# Drill 3, a KV cache too small for max_model_len, is the fleet's failing rollout (test_3_fleet.py): the same launch,
# classified with vLLM's estimate, then put back.


# Drill 4, the Ray executor on the CPU build (bad_argument, with the hint to use mp), is the fleet's change that fails
# after its server stopped (test_3_fleet.py): the same launch, classified, then put back.


def test_drill_5_a_lost_worker_is_named_by_ray_cluster():
    worker = node(pair().worker)
    worker.check_output("docker stop --time 5 sparkinfer-ray")
    try:
        run = drill_run("cluster.yml", {"ray_cluster_wait_timeout": 10}, "--tags", "ray_cluster_verify")
        assert run.code == 2, run.output[-3000:]
        assert f"{pair().worker} ({pair().worker_ip}) has no Ray raylet in its container sparkinfer-ray" in run.output, run.output[-3000:]
        assert "exited" in run.output
        # The wait's 10 s, and Ansible's own time on a loaded host.
        record("5 worker lost", run.seconds, 70, "ray_cluster: node without raylet")
        # The API still serves (mp ranks), the cluster is not whole: status calls it degraded, and says why. (The doctor's
        # error on this node is judged in tests/unit/plugins/filter/test_doctor.py on its real reading, ray-worker-stopped.)
        status = drill_run("status.yml")
        assert status.code == 0, status.output[-3000:]
        assert f"Cluster of {pair().head} (2 nodes): degraded, {pair().worker}'s Ray container is exited" in status.output, status.output[-3000:]
        assert f"Fleet of 1 cluster - 0 serving, 1 degraded, 0 down; {pair().head} degraded" in status.output, status.output[-3000:]
    finally:
        restored = drill_run("cluster.yml")
        assert restored.code == 0, restored.output[-3000:]
    # The stopped worker is started again and the head left alone; the role's Verify saw every node ALIVE with its GPU.
    assert re.search(rf"{pair().head} +: ok=\d+ +changed=0 ", restored.output), restored.output[-1500:]
    assert re.search(rf"{pair().worker} +: ok=\d+ +changed=[1-9]", restored.output), restored.output[-1500:]


VALIDATE_CONTAINER = "sparkinfer-vllm-validate"


def test_drill_6_an_environment_variable_the_entrypoint_ignores_is_caught_by_the_single_node_validation_from_vllms_warning():
    # validate_single_node.yml, the first launch docs/real-sparks.md runs: vLLM on the head alone, beside the pair's server.
    worker = running_containers(pair().worker)
    try:
        run = drill_run("validate_single_node.yml", {"vllm_serve_extra_env": {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_MAX_MODEL_LEN": "256"}})
        # The failed validation's container is stopped, its log kept; nothing of it runs.
        left = node(pair().head).check_output(f"docker ps -a --filter name=^{VALIDATE_CONTAINER}$ --format '{{{{.State}}}}'")
    finally:
        node(pair().head).run(f"docker rm -f {VALIDATE_CONTAINER}; rm -f /etc/sparkinfer/{VALIDATE_CONTAINER}.*")
    assert run.code == 2, run.output[-3000:]
    assert "vLLM ignored VLLM_MAX_MODEL_LEN, which the container was given" in run.output, run.output[-3000:]
    assert "vLLM runs with max_model_len=512" in run.output
    assert left == "exited", left
    # On the head alone: the worker was not in the play, and its rank runs as before.
    assert re.search(rf"{pair().worker} *: ok=", run.output) is None, run.output[-3000:]
    assert running_containers(pair().worker) == worker
    record("6 env-var entrypoint trap", run.seconds, 180, "validate_single_node.yml: vllm_wait ignored_environment")


# Every value wrong at once, and two names misspelt, as an inventory may hold several mistakes: each is named in the one
# refusal, which lists every role's errors together before any host is touched.
BAD_INVENTORY = {
    "gb10_host_required_memory_available_gib": ("plenty", "gb10_host_required_memory_available_gib"),
    "gb10_host_earlyoom_enabled": ("sometimes", "gb10_host_earlyoom_enabled"),
    "nccl_network_mtu": ("jumbo", "nccl_network_mtu"),
    "nccl_network_fabric_port": (2, "value of nccl_network_fabric_port must be one of: 0, 1, got: 2"),
    "vllm_image_source": ("registry", "value of vllm_image_source must be one of: node, pull, load, got: registry"),
    "vllm_image_executor": ("slurm", "value of vllm_image_executor must be one of: auto, mp, ray, got: slurm"),
    "ray_cluster_state": ("stopped", "value of ray_cluster_state must be one of: auto, started, absent, got: stopped"),
    "ray_cluster_port": ("gcs", "argument 'ray_cluster_port' is of type str and we were unable to convert to int"),
    "ray_cluster_num_gpus": ([1], "ray_cluster_num_gpus"),
    "ray_cluster_dashboard_enabled": ("sometimes", "argument 'ray_cluster_dashboard_enabled' is of type str and we were unable to convert to bool"),
    "ray_cluster_extra_env": ("RAY_memory_usage_threshold", "argument 'ray_cluster_extra_env' is of type str and we were unable to convert to dict"),
    "ray_cluster_firewall_enabled": ("sometimes", "argument 'ray_cluster_firewall_enabled' is of type str and we were unable to convert to bool"),
    "vllm_serve_executor": ("torchrun", "value of vllm_serve_executor must be one of: mp, ray, got: torchrun"),
    "vllm_serve_tensor_parallel_size": ("two", "vllm_serve_tensor_parallel_size"),
    "vllm_serve_gpu_memory_utilization": ("most", "vllm_serve_gpu_memory_utilization"),
    "vllm_serve_wait_stage": ("serving", "value of vllm_serve_wait_stage must be one of"),
    # Misspelt names, which Ansible would ignore: the roles would run with their defaults.
    "nccl_network_fabric_adresses": (
        ["192.168.180.11/24"],
        "nccl_network_fabric_adresses is no variable of the collection (did you mean nccl_network_fabric_addresses?)",
    ),
    "sparkinfer_recipie": ("tiny-qwen3-moe", "sparkinfer_recipie is no variable of the collection (did you mean sparkinfer_recipe?)"),
}


def test_drill_7_bad_inventory_values_stop_site_before_any_host_changes_each_named():
    run = drill_run("site.yml", {variable: value for variable, (value, _named) in BAD_INVENTORY.items()})
    assert run.code == 2, run.output[-3000:]
    assert f"The inventory has invalid values: {pair().head}: " in run.output, run.output[-3000:]
    missing = [named for _value, named in BAD_INVENTORY.values() if named not in run.output]
    assert not missing, run.output[-6000:]
    assert "nothing was changed on any host" in run.output
    # Only the validation play ran: its one task, run once for every node, none changed.
    assert re.search(rf"{pair().head} +: ok=0 +changed=0 +unreachable=0 +failed=1 ", run.output), run.output[-1500:]
    assert f"{pair().worker}: vllm_serve: value of vllm_serve_executor must be one of: mp, ray, got: torchrun." in run.output
    assert not re.search(rf"{pair().worker} +: ok=", run.output), run.output[-1500:]
    assert "Gathering Facts" not in run.output
    record(f"7 bad inventory: {len(BAD_INVENTORY)} values at once", run.seconds, 30, "validate_inventory: argument_specs")


def test_a_run_limited_to_one_node_of_a_pair_is_not_taken_for_a_cluster_of_one_node():
    # The lab inventory does not list the cluster's nodes (sparkinfer_cluster_hosts): limited to the worker, the play's
    # one node would pass for a Spark alone, and get a loopback environment in place of the pair's.
    run = drill_run("network.yml", {}, "--limit", pair().worker)
    assert run.code == 2, run.output[-3000:]
    assert (
        f"The run is limited (--limit {pair().worker}) and the inventory does not say which nodes make the cluster, so nccl_network "
        f"would take {pair().worker} for a cluster of one node and configure no fabric."
    ) in run.output, run.output[-3000:]
    assert "127.0.0.1" not in node(pair().worker).check_output("cat /etc/sparkinfer/nccl.env")


def test_drill_9_only_the_configured_addresses_listen_and_the_api_wants_its_key():
    head, worker = node(pair().head), node(pair().worker)
    listeners = {host: head_or_worker.check_output("ss -Hltn") for host, head_or_worker in ((pair().head, head), (pair().worker, worker))}
    # vLLM's API on the head's fabric address only; no dashboard.
    assert re.search(rf"{re.escape(pair().head_ip)}:8000\b", listeners[pair().head]), listeners[pair().head]
    for host, table in listeners.items():
        assert not re.search(r"(\*|0\.0\.0\.0|\[::\]):(8000|8265)\b", table), f"{host}: {table}"
    # Ray's GCS binds every address (Ray has no option against it): the firewall lets only the pair in.
    assert not connects(pair().head_ip, 6379)
    assert connects_from(worker, pair().head_ip, 6379)
    # The API refuses a request without the key.
    request = urllib.request.Request(f"http://{pair().head_ip}:8000/v1/models")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 401
    # No secret in -vvv output of the whole chain: drill 8's re-run of site.yml runs with -vvv and checks it.


def test_a_prometheus_configured_as_the_docs_say_scrapes_every_target_of_the_targets_file(tmp_path):
    targets_file = tmp_path / "targets.json"
    tmp_path.chmod(0o1777)
    run = drill_run("prometheus_targets.yml", {"sparkinfer_prometheus_targets_file": str(targets_file)})
    assert run.code == 0, run.output[-3000:]
    # The directory the user named keeps its mode.
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o1777
    assert f"1 vLLM and 2 Ray metrics targets in {targets_file}" in run.output, run.output[-3000:]
    groups = json.loads(targets_file.read_text(encoding="utf-8"))
    head, worker = pair().head, pair().worker
    api = [group for group in groups if group["labels"]["job"] == "sparkinfer-vllm"]
    assert [(group["targets"], group["labels"]["__scheme__"], group["labels"]["sparkinfer_node"]) for group in api] == [
        ([f"{pair().head_ip}:8000"], "http", head)
    ]
    # A real Prometheus on the admin box, with the docs' scrape config for a /metrics behind the API key: the admin box
    # is a metrics scraper of the drills' Ray cluster (drill_run), which lets it reach Ray's metrics ports only.
    with prometheus(tmp_path, targets_file, api_key()):
        targets = targets_once_scraped(3)
        scraped = sorted((t["labels"]["job"], t["labels"]["sparkinfer_node"], t["labels"]["sparkinfer_cluster"], t["health"], t["lastError"]) for t in targets)
        assert scraped == [
            ("sparkinfer-ray", head, head, "up", ""),
            ("sparkinfer-ray", worker, head, "up", ""),
            ("sparkinfer-vllm", head, head, "up", ""),
        ], targets
    assert not connects(pair().head_ip, 6379, timeout=1.0)


def assert_changed_nothing(run: Run) -> None:
    for host in (pair().head, pair().worker):
        assert re.search(rf"{host} +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0 ", run.output), changed_tasks(run.output)


def changed_tasks(output: str) -> list[str]:
    """What a playbook run's output says before each "changed: [host]": the task that changed, for a failure's message."""
    return [output[max(0, match.start() - 400) : match.end() + 40] for match in re.finditer(r"changed: \[", output)][:6]


def test_drill_8_the_restored_pair_converges_with_no_change_and_check_mode_agrees():
    # One re-run serves two drills: changed=0 on the restored pair (8), and no secret in its -vvv output (9): the
    # API key, Ray's token, the image transfer's SSH key.
    rerun = drill_run("site.yml", {}, "-vvv")
    assert rerun.code == 0, rerun.output[-3000:]
    assert_changed_nothing(rerun)
    assert api_key() not in rerun.output
    assert ray_token() not in rerun.output
    assert "VLLM_API_KEY=" not in rerun.output
    assert "PRIVATE KEY" not in rerun.output
    record("8 re-run of site.yml (-vvv)", rerun.seconds, 600, "changed=0, no secret in the output")
    check = drill_run("site.yml", {}, "--check")
    assert check.code == 0, check.output[-3000:]
    assert_changed_nothing(check)
    record("8 site.yml --check", check.seconds, 600, "changed=0, failed=0")


# The files each node's part of the doctor's support bundle holds (playbooks/tasks/doctor_bundle_node.yml).
BUNDLE_FILES = {
    "docker-inspect.json",
    "docker-ps.txt",
    "fabric.json",
    "gb10.json",
    "ip-addr.txt",
    "ip-d-link.txt",
    "nccl.env",
    "nvidia-smi-q.txt",
    "ray-cluster.json",
    "ray-status.txt",
    "vllm-log-facts.json",
    "vllm.log",
}


# What a user leaves on a node that is none of the collection's: tokens added to the NCCL environment file by hand (or by an
# earlier inventory's nccl_network_extra_env), and a container of their own with a token on its command line.
PLANTED_ENV = "HF_TOKEN=hf_PLANTEDhftoken\nWANDB_API_KEY=PLANTEDwandbkey\n"
PLANTED_CONTAINER = "someone-elses-vllm"
PLANTED_ARG = "hf_PLANTEDontheline"


PLATFORM_ROWS_FINE = ("driver branch 580", "kernel", "CUDA driver of the image")


def test_the_doctor_finds_the_restored_pair_healthy_and_its_bundle_holds_no_secret(tmp_path):
    head = node(pair().head)
    env_file = "/etc/sparkinfer/nccl.env"
    head.check_output(
        f"cp -p {env_file} {env_file}.kept && printf {shlex.quote(PLANTED_ENV)} >> {env_file} && "
        f"docker create --name {PLANTED_CONTAINER} --entrypoint true sparkinfer-lab-vllm:latest --hf-token {PLANTED_ARG}"
    )
    # A shared directory the user keeps reports in: its mode is theirs, never re-moded.
    tmp_path.chmod(0o1777)
    try:
        run = drill_run("doctor.yml", {"doctor_bundle": True, "doctor_report_dir": str(tmp_path)})
    finally:
        head.check_output(f"mv {env_file}.kept {env_file} && docker rm {PLANTED_CONTAINER}")
    assert run.code == 0, run.output[-3000:]
    assert f"Doctor on the cluster of {pair().head} (2 nodes): 0 error(s), 0 warning(s), 18 check(s) fine" in run.output, run.output[-3000:]
    # One of them is the inventory's values, by validate_inventory's rules.
    assert "the inventory's values pass the rules validate_inventory.yml judges: 2 node(s) judged" in run.output, run.output[-3000:]
    assert_changed_nothing(run)
    # Five of them are the platform table's: each node's driver branch and kernel, and the head's image's CUDA driver
    # (the stand-in's 580.173.02; the lab's kernel has no kexec-handover scratch area; the lab image carries no compat libcuda).
    findings = json.loads((tmp_path / f"{pair().head}.json").read_text(encoding="utf-8"))["findings"]
    platform = sorted((entry["area"], entry["node"], entry["what"]) for entry in findings if entry["what"] in PLATFORM_ROWS_FINE)
    assert platform == sorted(
        [
            *(("host", host, what) for host in (pair().head, pair().worker) for what in ("driver branch 580", "kernel")),
            ("image", pair().head, "CUDA driver of the image"),
        ]
    )
    record("doctor.yml with its bundle, healthy pair", run.seconds, 90, "doctor: 0 errors")
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o1777
    [bundle] = tmp_path.glob(f"{pair().head}-*.tar.gz")
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600
    with tarfile.open(bundle) as packed:
        contents = {member.name: packed.extractfile(member).read() for member in packed.getmembers() if member.isfile()}
    for host in (pair().head, pair().worker):
        assert {name.split("/")[-1] for name in contents if name.startswith(f"{pair().head}/{host}/")} == BUNDLE_FILES
    report = json.loads(contents[f"{pair().head}/report.json"])
    assert [finding for finding in report["findings"] if finding["severity"] != "ok"] == []
    head_files = f"{pair().head}/{pair().head}/"
    assert b"Resolved architecture: Qwen3MoeForCausalLM" in contents[head_files + "vllm.log"]
    assert b"Active:" in contents[head_files + "ray-status.txt"]
    assert f"VLLM_HOST_IP={pair().head_ip}".encode() in contents[head_files + "nccl.env"]
    # The head's API key is in its container's environment: the bundle keeps the name, not the value.
    assert b'"VLLM_API_KEY=<masked>"' in contents[head_files + "docker-inspect.json"]
    # Masked by allowlist: the names the collection writes keep their values, the planted ones do not.
    assert b"HF_TOKEN=<masked>\nWANDB_API_KEY=<masked>" in contents[head_files + "nccl.env"]
    # Only the collection's containers are listed.
    assert b"sparkinfer-vllm" in contents[head_files + "docker-ps.txt"]
    assert PLANTED_CONTAINER.encode() not in contents[head_files + "docker-ps.txt"]
    for name, content in contents.items():
        assert api_key().encode() not in content, f"{name} holds the API key"
        assert ray_token().encode() not in content, f"{name} holds the Ray token"
        assert b"PLANTED" not in content, f"{name} holds a planted token"
