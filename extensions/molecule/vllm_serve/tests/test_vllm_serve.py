"""Verify vllm_serve on two lab nodes: one API across both ranks, gated, keyed, on the management network; the ranks on the fabric."""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from probes import connects, connects_any, connects_from
from role_runs import CONVERGE, run_playbook, run_role

SCENARIO = "vllm_serve"
HEAD_IP = "192.168.182.11"
FOLLOWER_IP = "192.168.182.12"
# The head's address on the management network, where its default route leaves from: the API's by default.
HEAD_MGMT_IP = "10.207.182.11"
MGMT_NETWORK = "sparkinfer-molecule-serve-mgmt"
ENDPOINT = f"http://{HEAD_MGMT_IP}:8000"
CONTAINER = "sparkinfer-vllm"
KEY_FILE = Path.home() / ".config" / "sparkinfer" / "serve-spark-1-vllm-api-key"
# The mp rendezvous (PyTorch's TCPStore on the head) and the chain that guards it.
RENDEZVOUS_PORT = 29501
CHAIN = "SPARKINFER-VLLM"
COMMENT = "sparkinfer.cluster vllm_serve - mp rendezvous, cluster nodes only"
RDMA_DIR = "/dev/infiniband"
JUMP = f'-A INPUT -p tcp -m multiport --dports {RENDEZVOUS_PORT} -m comment --comment "{COMMENT}" -j {CHAIN}'


def node(name: str) -> testinfra.host.Host:
    return testinfra.get_host(f"ansible://{name}?ansible_inventory={os.environ['MOLECULE_INVENTORY_FILE']}", sudo=True)


def http_status(
    host,
    path: str,
    key: str | None,
    *,
    body: dict | None = None,
    endpoint: str = ENDPOINT,
    ca_file: str = "",
    method: str | None = None,
    headers: dict | None = None,
) -> tuple[int, str]:
    """The status and body of GET path (POST with a JSON body, or the method given) on the endpoint, asked from a node with Python's urllib."""
    headers = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    if data is not None:
        headers["Content-Type"] = "application/json"
    script = (
        "import ssl, sys, urllib.request, urllib.error\n"
        f"request = urllib.request.Request({endpoint + path!r}, data={data!r}, headers={headers!r}, method={method!r})\n"
        f"context = ssl.create_default_context(cafile={ca_file!r}) if {bool(ca_file)!r} else None\n"
        "try:\n"
        "    response = urllib.request.urlopen(request, timeout=30, context=context)\n"
        "    print(response.status); print(response.read().decode())\n"
        "except urllib.error.HTTPError as exc:\n"
        "    print(exc.code); print(exc.read().decode())\n"
    )
    # /health answers with an empty body, which check_output's stripping leaves as the status line alone.
    lines = host.check_output(f"python3 -c {shlex.quote(script)}").split("\n", 1)
    return int(lines[0]), lines[1] if len(lines) > 1 else ""


def container_args(host) -> list[str]:
    return json.loads(host.check_output(f"docker inspect --format '{{{{json .Args}}}}' {CONTAINER}"))


def test_the_api_lists_the_served_model_with_the_kept_key_and_refuses_without_it():
    key = KEY_FILE.read_text(encoding="utf-8").split()[0]
    assert len(key) == 40
    status, body = http_status(node("serve-spark-2"), "/v1/models", key)
    assert status == 200, body
    assert [model["id"] for model in json.loads(body)["data"]] == ["tiny-qwen3-moe"]
    assert http_status(node("serve-spark-2"), "/v1/models", None)[0] == 401


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/version", None),
        ("/metrics", None),
        ("/tokenize", {"model": "tiny-qwen3-moe", "prompt": "Say hello."}),
        ("/invocations", {"model": "tiny-qwen3-moe", "prompt": "Say hello.", "max_tokens": 1}),
    ],
)
def test_routes_vllm_leaves_open_need_the_key_too(path, body):
    # vLLM guards /v1, /v2, /inference and /cohere only; the role's middleware guards the rest.
    follower = node("serve-spark-2")
    status, answer = http_status(follower, path, None, body=body)
    assert (status, answer.strip()) == (401, '{"error": "Unauthorized"}')
    if path != "/invocations":
        key = KEY_FILE.read_text(encoding="utf-8").split()[0]
        assert http_status(follower, path, key, body=body)[0] == 200


def test_options_needs_the_key_but_a_cors_preflight_is_answered_by_vllm_s_cors_settings_alone():
    follower = node("serve-spark-2")
    # vLLM 0.32 answers OPTIONS /metrics like GET, with every metric: the guard refuses it without the key.
    status, body = http_status(follower, "/metrics", None, method="OPTIONS")
    assert (status, body.strip()) == (401, '{"error": "Unauthorized"}')
    # A browser's preflight carries no key: it passes the guard and vLLM's CORS middleware answers it, by vLLM's
    # --allowed-origins (none in vLLM 0.32 unless given), never a route.
    preflight = {"Origin": "http://app.example", "Access-Control-Request-Method": "GET"}
    status, body = http_status(follower, "/metrics", None, method="OPTIONS", headers=preflight)
    assert (status, body.strip()) == (400, "Disallowed CORS origin")


def test_the_health_probe_answers_without_the_key():
    assert http_status(node("serve-spark-2"), "/health", None)[0] == 200


def test_both_ranks_run_identical_serve_flags_and_differ_only_in_rank():
    head, follower = container_args(node("serve-spark-1")), container_args(node("serve-spark-2"))
    rank_tail = ["--nnodes", "2", "--node-rank"]
    split_head, split_follower = head.index("--nnodes"), follower.index("--nnodes")
    assert head[:split_head] == follower[:split_follower]
    assert head[split_head:] == [*rank_tail, "0", "--master-addr", HEAD_IP, "--master-port", "29501"]
    assert follower[split_follower:] == [*rank_tail, "1", "--master-addr", HEAD_IP, "--master-port", "29501", "--headless"]
    assert "--pipeline-parallel-size" in head and head[head.index("--pipeline-parallel-size") + 1] == "2"
    assert not [arg for arg in head + follower if "api" in arg.lower() and "key" in arg.lower()]


def test_the_api_listens_on_the_management_address_only():
    listening = node("serve-spark-1").check_output("ss -Hltn")
    sockets = [line.split()[3] for line in listening.splitlines()]
    assert f"{HEAD_MGMT_IP}:8000" in sockets
    assert not [socket for socket in sockets if socket.endswith(":8000") and socket != f"{HEAD_MGMT_IP}:8000"]


def test_a_client_on_the_management_network_alone_gets_a_chat_completion():
    # A container of the lab node image on the management network only, as a laptop on a Spark's 10 GbE: no fabric.
    key = KEY_FILE.read_text().strip()
    request = (
        "import json, sys, urllib.request\n"
        f"request = urllib.request.Request({ENDPOINT + '/v1/chat/completions'!r}, headers={{'Authorization': 'Bearer ' + sys.argv[1],"
        " 'Content-Type': 'application/json'}, data=json.dumps({'model': 'tiny-qwen3-moe', 'max_tokens': 4,"
        " 'messages': [{'role': 'user', 'content': 'Hi'}]}).encode())\n"
        "print(json.load(urllib.request.urlopen(request, timeout=60))['choices'][0]['finish_reason'])\n"
        "import socket\n"
        "probe = socket.socket()\n"
        "probe.settimeout(5)\n"
        f"print(probe.connect_ex(({HEAD_IP!r}, 8000)))\n"
    )
    client = subprocess.run(
        ["docker", "run", "--rm", "--network", MGMT_NETWORK, "--entrypoint", "python3", "sparkinfer-lab-node:latest", "-c", request, key],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert client.returncode == 0, client.stderr[-2000:]
    finish_reason, fabric_connect = client.stdout.split()
    assert finish_reason in ("length", "stop")
    # The client has no way onto the fabric: the ranks' network stays between the nodes.
    assert fabric_connect != "0"


def chain_rules(host, command: str = "iptables") -> list[str]:
    """The rules of the rendezvous chain and every jump to it, in the order `-S` lists them."""
    return [rule for rule in host.check_output(f"{command} -S").splitlines() if CHAIN in rule]


def assert_rendezvous_guarded(head) -> None:
    rules = head.check_output("iptables -S").splitlines()
    assert next(rule for rule in rules if rule.startswith("-A INPUT ")) == JUMP, rules
    assert chain_rules(head) == [
        f"-N {CHAIN}",
        JUMP,
        f"-A {CHAIN} -i lo -j ACCEPT",
        f"-A {CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        f"-A {CHAIN} -s {HEAD_IP}/32 -j ACCEPT",
        f"-A {CHAIN} -s {FOLLOWER_IP}/32 -j ACCEPT",
        f"-A {CHAIN} -j DROP",
    ]


def test_the_rendezvous_port_answers_the_cluster_nodes_only():
    head, follower = node("serve-spark-1"), node("serve-spark-2")
    # PyTorch's TCPStore listens on every address of the head for as long as vLLM serves.
    listening = [line.split()[3] for line in head.check_output("ss -Hltn").splitlines()]
    assert {f"0.0.0.0:{RENDEZVOUS_PORT}", f"*:{RENDEZVOUS_PORT}", f"[::]:{RENDEZVOUS_PORT}"} & set(listening), listening
    assert_rendezvous_guarded(head)
    assert chain_rules(head, "ip6tables") == [
        f"-N {CHAIN}",
        JUMP,
        f"-A {CHAIN} -i lo -j ACCEPT",
        f"-A {CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
        f"-A {CHAIN} -j DROP",
    ]
    # The follower has no rendezvous of its own, and no chain.
    assert chain_rules(follower) == []
    # This process runs on the host that owns the fabric's bridge: an address on the fabric that is not a node's.
    own = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    assert re.search(r"inet 192\.168\.182\.1/24 ", own), own
    # Nor from the management network, where the API is.
    refused = connects_any([(HEAD_IP, RENDEZVOUS_PORT), (HEAD_MGMT_IP, RENDEZVOUS_PORT)])
    assert not any(refused.values()), refused
    assert connects(HEAD_MGMT_IP, 8000)
    assert connects_from(follower, HEAD_IP, RENDEZVOUS_PORT)
    # Put back at boot before Docker starts, which requires it.
    assert head.check_output("systemctl is-enabled sparkinfer-vllm-firewall.service") == "enabled"
    assert "sparkinfer-vllm-firewall.service" in head.check_output("systemctl list-dependencies --plain docker.service")


def test_the_boot_unit_started_by_hand_leaves_one_jump_and_refuses_a_restart_that_would_restart_docker():
    head = node("serve-spark-1")
    # The role enabled it for the next boot and put the running rules itself: a start by hand applies them again.
    head.check_output("systemctl start sparkinfer-vllm-firewall.service")
    assert_rendezvous_guarded(head)
    assert len([rule for rule in chain_rules(head, "ip6tables") if rule.startswith("-A INPUT ")]) == 1
    # Docker requires the unit: restarting it would restart Docker and stop vLLM (restart policy no).
    restarted = head.run("systemctl restart sparkinfer-vllm-firewall.service")
    assert restarted.rc != 0
    assert "refuse manual start/stop" in restarted.stderr, restarted.stderr
    assert head.check_output(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}") == "true"


def test_the_head_records_the_gated_launch_for_status():
    record = json.loads(node("serve-spark-1").file(f"/etc/sparkinfer/{CONTAINER}.json").content_string)
    assert record["endpoint"] == f"{ENDPOINT}/v1"
    assert record["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    assert record["vllm_log"]["pipeline_parallel_size"] == 2
    assert record["vllm_log"]["outcome"] == "ready"
    assert 0 < record["stage_seconds"]["architecture_resolved"] < record["stage_seconds"]["ready"]


def test_a_smoke_request_the_server_refuses_fails_the_run_with_vllm_s_answer_and_leaves_the_server_serving():
    head = node("serve-spark-1")
    started = head.check_output(f"docker inspect --format '{{{{.State.StartedAt}}}}' {CONTAINER}")
    # More tokens than the served max_model_len (512) holds: vLLM answers 400.
    code, output = run_role(SCENARIO, {"vllm_serve_smoke_max_tokens": 4096})
    assert code == 2, output[-3000:]
    # vLLM's own answer, then what it means.
    assert f"POST /v1/chat/completions on {HEAD_MGMT_IP}:8000 answered 400: max_tokens=4096 cannot be greater than max_model_len=512." in output, output[-3000:]
    assert (
        "vLLM refused the smoke test's request as invalid: the server is up, but the request asks what the served model cannot give "
        "(vllm_serve_smoke_max_tokens is 4096 with max_model_len 512;"
    ) in output, output[-3000:]
    assert re.search(r"serve-spark-1 *: ok=\d+ +changed=0 ", output), output[-3000:]
    # The follower ran the whole role on the converged pair (the smoke request is the head's): it is idempotent,
    # which is the scenario's re-run proof (molecule.yml has no idempotence phase).
    assert re.search(r"serve-spark-2 *: ok=\d+ +changed=0 +unreachable=0 +failed=0 ", output), output[-3000:]
    assert head.check_output(f"docker inspect --format '{{{{.State.StartedAt}}}}' {CONTAINER}") == started


def test_the_rank_environment_file_holds_the_key_for_root_only():
    env_file = node("serve-spark-1").file(f"/etc/sparkinfer/{CONTAINER}.env")
    assert env_file.mode == 0o600
    assert env_file.user == "root"
    assert "VLLM_API_KEY=" in env_file.content_string
    assert "NCCL_SOCKET_IFNAME=eth1" in env_file.content_string
    assert "VLLM_API_KEY=" not in node("serve-spark-2").file(f"/etc/sparkinfer/{CONTAINER}.env").content_string


# What vLLM logs of its torch.compile cache: the AOT-compiled model saved, loaded, or found and not loadable.
SAVED_AOT = re.compile(r"saved AOT compiled function to (/var/cache/sparkinfer/vllm/torch_compile_cache/\S+)")
REUSED_AOT = re.compile(r"(?:Directly load AOT compilation from path|Compiling model again due to a load failure from) (/[^\s,]+)")


def test_a_relaunch_of_the_same_model_and_flags_reads_the_graphs_the_first_launch_compiled_into_the_nodes_cache():
    head, follower = node("serve-spark-1"), node("serve-spark-2")
    # The converged launch compiled each rank's graph into its node's cache (the host's /opt/sparkinfer/cache/vllm).
    saved = {}
    for host in (head, follower):
        assert "VLLM_CACHE_ROOT=/var/cache/sparkinfer/vllm" in host.file(f"/etc/sparkinfer/{CONTAINER}.env").content_string
        saved[host] = SAVED_AOT.search(host.check_output(f"docker logs {CONTAINER} 2>&1")).group(1)
        assert host.file(saved[host].replace("/var/cache/sparkinfer/vllm/", "/opt/sparkinfer/cache/vllm/", 1)).is_file
    first = json.loads(head.file(f"/etc/sparkinfer/{CONTAINER}.json").content_string)["stage_seconds"]["ready"]
    # The head's rank lost: the role starts it again and restarts the follower (ranks meet only at start).
    head.check_output(f"docker rm -f {CONTAINER}")
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-3000:]
    for host in (head, follower):
        # The follower's container was restarted, not recreated: its log holds both starts, the latest last.
        log = host.check_output(f"docker logs {CONTAINER} 2>&1")
        reused = list(REUSED_AOT.finditer(log))
        # On a GPU vLLM loads it ("Directly load AOT compilation"); vLLM 0.32.0's CPU build finds it and cannot load
        # it ("'function' object has no attribute 'finalize_loading'", docs/lab.md) and compiles again.
        assert reused and reused[-1].group(1) == saved[host], log[-3000:]
    second = json.loads(head.file(f"/etc/sparkinfer/{CONTAINER}.json").content_string)["stage_seconds"]["ready"]
    print(f"seconds to ready: first launch {first}, relaunch with the node's cache {second}")


def single_node_override(**extra):
    """Another server on the head alone, beside the converged one: its own container, port and master port."""
    return {
        "vllm_serve_hosts": ["serve-spark-1"],
        "vllm_serve_pipeline_parallel_size": 1,
        "vllm_serve_container_name": "sparkinfer-vllm-drill",
        "vllm_serve_port": 8011,
        "vllm_serve_master_port": 29511,
        **extra,
    }


@pytest.fixture
def drill_container():
    yield "sparkinfer-vllm-drill"
    node("serve-spark-1").run("docker rm -f sparkinfer-vllm-drill; rm -f /etc/sparkinfer/sparkinfer-vllm-drill.*")


# What needs the nodes: Ray, memory, files, devices. The argument specification's refusals are drill 7's (e2e), and the
# rules of the variables alone one table (module_utils/_vllm_serve_settings.py, each rule unit-tested): one case here
# (open-path) shows the preflight refuses on it.
@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"vllm_serve_executor": "ray", "vllm_serve_ray_address": f"{HEAD_IP}:6379"},
            f"No Ray GCS answers at {HEAD_IP}:6379 (vllm_serve_ray_address)",
        ),
        ({"vllm_serve_memory_reserve_gib": 4096}, "The memory plan refuses this launch"),
        (
            # As if the lab machine were a GB10, whose start-up check asks for utilization x total free: no machine has 99 % free.
            {"vllm_serve_memory_startup_free_gib": 1000, "vllm_serve_gpu_memory_utilization": 0.99},
            "serve-spark-1 has less memory free than vLLM's start-up check asks for, so no rank was started",
        ),
        (
            {"vllm_serve_tls_certfile": "/etc/sparkinfer/none/cert.pem", "vllm_serve_tls_keyfile": "/etc/sparkinfer/none/key.pem"},
            "/etc/sparkinfer/none/cert.pem, /etc/sparkinfer/none/key.pem (vllm_serve_tls_certfile, vllm_serve_tls_keyfile, vllm_serve_tls_ca_file) "
            "not found as files on the head serve-spark-1",
        ),
        ({"vllm_serve_api_open_paths": ["/health", "/x;y"]}, "serve-spark-1: vllm_serve_api_open_paths holds '/x;y': give absolute URL paths"),
        ({"vllm_serve_rdma": True}, '"/dev/infiniband" (vllm_serve_rdma_devices) not found on serve-spark-1'),
        (
            {"vllm_serve_cache_dirs": {"torch": "/opt/torch"}},
            "vllm_serve_cache_dirs names the unknown caches torch; allowed are flashinfer, huggingface, triton, vllm",
        ),
    ],
    ids=[
        "ray-executor-without-ray",
        "memory-plan",
        "memory-free-at-start",
        "tls-missing",
        "open-path",
        "rdma-without-devices",
        "unknown-cache",
    ],
)
def test_the_role_refuses_what_cannot_serve_and_says_why(drill_container, override, message):
    head = node("serve-spark-1")
    start = time.monotonic()
    code, output = run_role(SCENARIO, single_node_override(**override))
    elapsed = time.monotonic() - start
    assert code == 2, output[-3000:]
    assert message in output, output[-3000:]
    assert elapsed < 120, f"took {elapsed:.0f} s"
    assert head.run(f"docker inspect {drill_container}").rc == 1
    # The converged server is untouched, and a one-node run leaves the cluster's rendezvous guarded.
    assert head.check_output(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}") == "true"
    assert_rendezvous_guarded(head)


# The lab's image configured by environment variables, as the AWS vLLM SageMaker container is (lab/vllm-image/sagemaker/).
SAGEMAKER_CONTEXT = Path(__file__).resolve().parents[4] / "lab" / "vllm-image" / "sagemaker"
SAGEMAKER_IMAGE = "sparkinfer-lab-vllm:sagemaker"
SAGEMAKER_ENTRYPOINT = ["python3", "/usr/local/lib/sparkinfer-lab/sagemaker_entrypoint.py"]


def build_on(host, context: Path, tag: str) -> None:
    """docker build of a small context folder on a node, whose engine already holds the base image."""
    folder = f"/tmp/{tag.replace(':', '-')}"
    writes = " && ".join(f"echo {base64.b64encode(path.read_bytes()).decode()} | base64 -d > {folder}/{path.name}" for path in sorted(context.iterdir()))
    host.check_output(f"mkdir -p {folder} && {writes} && docker build -q -t {tag} {folder}")


def test_an_image_configured_by_its_environment_starts_from_its_variables_and_its_log_is_gated(drill_container):
    head = node("serve-spark-1")
    build_on(head, SAGEMAKER_CONTEXT, SAGEMAKER_IMAGE)
    # Without the API guard, which needs vLLM's command line; a gate that expects another architecture than the model's.
    expect = {"architecture": "Qwen3_5MoeForConditionalGeneration"}
    override = single_node_override(
        vllm_serve_image=SAGEMAKER_IMAGE, vllm_serve_env_profile="sagemaker", vllm_serve_api_guard_enabled=False, vllm_serve_expect=expect
    )
    start = time.monotonic()
    code, output = run_role(SCENARIO, override)
    elapsed = time.monotonic() - start
    # The gate read the rank's log as soon as vLLM named the model's class, and stopped the rank (on a Spark it would go on
    # loading weights), keeping its log.
    assert code == 2, output[-3000:]
    assert "the log says architecture='Qwen3MoeForCausalLM', the gate expects architecture='Qwen3_5MoeForConditionalGeneration'" in output, output[-3000:]
    assert "The rank on serve-spark-1 was stopped" in output, output[-3000:]
    assert elapsed < 240, f"took {elapsed:.0f} s"
    assert head.check_output(f"docker inspect --format '{{{{.State.Status}}}}' {drill_container}") == "exited"
    # The image's own entrypoint ran with no argument from the role: the spec reached it as SM_VLLM_* variables.
    config = json.loads(head.check_output(f"docker inspect --format '{{{{json .Config}}}}' {drill_container}"))
    assert (config["Entrypoint"], config["Cmd"]) == (SAGEMAKER_ENTRYPOINT, None)
    variables = dict(entry.split("=", 1) for entry in config["Env"])
    assert (variables["SM_VLLM_MODEL"], variables["SM_VLLM_PORT"]) == ("/opt/sparkinfer/models/tiny-qwen3-moe", "8011")
    # vLLM read them as its flags (its own port, 8011, over the entrypoint's 8080) and resolved the model they name.
    log = head.check_output(f"docker logs {drill_container} 2>&1")
    args = next(line for line in log.splitlines() if "non-default args: " in line)
    assert "'port': 8011" in args and "'max_model_len': 512" in args, args
    assert "Resolved architecture: Qwen3MoeForCausalLM" in log
    # The converged server is untouched, and a one-node run leaves the cluster's rendezvous guarded.
    assert head.check_output(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}") == "true"
    assert_rendezvous_guarded(head)


def drop_results(output: str) -> list[str]:
    """What each node did at the page-cache drop of a run: changed, skipping, ..."""
    return re.findall(r"TASK \[sparkinfer\.cluster\.vllm_serve : Launch \| Drop the page cache before the ranks start\] \*+ (\w+): ", output)


def free_memory_reads(output: str) -> list[str]:
    """What each node did at the read of its free memory before the ranks start."""
    return re.findall(r"TASK \[sparkinfer\.cluster\.vllm_serve : Launch \| Read the memory left free on the nodes that start a rank\] \*+ (\w+): ", output)


def test_a_rank_with_tls_rdma_and_the_page_cache_drop_serves_https_only_and_a_rerun_starts_and_drops_nothing(drill_container):
    head, follower = node("serve-spark-1"), node("serve-spark-2")
    tls = "/etc/sparkinfer/drill-tls"
    # The lab's stand-in for a ConnectX-7's RDMA devices: the uverbs character device (major 231) in the head's /dev.
    head.check_output(f"mkdir -p {RDMA_DIR} && mknod {RDMA_DIR}/uverbs0 c 231 192")
    # A self-signed certificate that names the head's management address: its own CA.
    head.check_output(
        f"mkdir -p {tls} && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=serve-spark-1 "
        f"-addext subjectAltName=IP:{HEAD_MGMT_IP} -keyout {tls}/key.pem -out {tls}/cert.pem 2>/dev/null && chmod 0600 {tls}/key.pem"
    )
    try:
        tls_vars = {"vllm_serve_tls_certfile": f"{tls}/cert.pem", "vllm_serve_tls_keyfile": f"{tls}/key.pem", "vllm_serve_tls_ca_file": f"{tls}/cert.pem"}
        # As if the lab machine were a GB10, with a utilization whose share of memory is surely free after the drop.
        startup_check = {"vllm_serve_memory_startup_free_gib": 1000, "vllm_serve_gpu_memory_utilization": 0.05, "vllm_serve_memory_reserve_gib": 0}
        # Eager: this server's flags miss the pair's compile cache, and nothing here is about compiling.
        override = single_node_override(**tls_vars, **startup_check, vllm_serve_rdma=True, vllm_serve_drop_page_cache=True, vllm_serve_enforce_eager=True)
        code, output = run_role(SCENARIO, override, limit="serve-spark-1")
        # The gate's readiness probe and the smoke test went over HTTPS, verifying the certificate.
        assert code == 0, output[-3000:]
        # The rank was about to start: its node dropped the page cache first, then read what was left free.
        assert drop_results(output) == ["changed"], output[-3000:]
        assert free_memory_reads(output) == ["ok"], output[-3000:]
        record = json.loads(head.file(f"/etc/sparkinfer/{drill_container}.json").content_string)
        assert record["endpoint"] == f"https://{HEAD_MGMT_IP}:8011/v1"
        args = json.loads(head.check_output(f"docker inspect --format '{{{{json .Args}}}}' {drill_container}"))
        assert args[args.index("--ssl-certfile") + 1] == "/run/sparkinfer/tls/cert.pem"
        assert args[args.index("--ssl-keyfile") + 1] == "/run/sparkinfer/tls/key.pem"
        # What NCCL needs to use RoCE from the container, and the device in it.
        host_config = json.loads(head.check_output(f"docker inspect --format '{{{{json .HostConfig}}}}' {drill_container}"))
        assert host_config["Devices"] == [{"PathOnHost": RDMA_DIR, "PathInContainer": RDMA_DIR, "CgroupPermissions": "rwm"}]
        # The lab machine's locked-memory limit stands for a real host's unlimited one (molecule.yml).
        assert host_config["Ulimits"] == [{"Name": "memlock", "Soft": 8388608, "Hard": 8388608}]
        assert host_config["CapAdd"] == ["IPC_LOCK"]
        assert head.check_output(f"docker exec {drill_container} stat -c %t:%T {RDMA_DIR}/uverbs0") == "e7:c0"
        # A client on the management network that trusts the certificate gets the models with the key; plain HTTP gets nothing.
        follower.check_output(f"cat > /tmp/drill-ca.pem << 'EOF'\n{head.file(f'{tls}/cert.pem').content_string}EOF")
        key = KEY_FILE.read_text(encoding="utf-8").split()[0]
        status, answer = http_status(follower, "/v1/models", key, endpoint=f"https://{HEAD_MGMT_IP}:8011", ca_file="/tmp/drill-ca.pem")
        assert status == 200, answer
        plain = f"import urllib.request; urllib.request.urlopen('http://{HEAD_MGMT_IP}:8011/health', timeout=10)"
        assert follower.run(f"python3 -c {shlex.quote(plain)}").rc != 0
        # The same run again starts nothing, so it drops nothing and changes nothing.
        code, output = run_role(SCENARIO, override, limit="serve-spark-1")
        assert code == 0, output[-3000:]
        assert drop_results(output) == ["skipping"], output[-3000:]
        assert free_memory_reads(output) == ["skipping"], output[-3000:]
        assert re.search(r"serve-spark-1 *: ok=\d+ +changed=0 ", output), output[-3000:]
    finally:
        head.run(f"rm -rf {tls} {RDMA_DIR}")
        follower.run("rm -f /tmp/drill-ca.pem")


def test_check_mode_makes_no_api_key_file_on_the_admin_box(tmp_path):
    key_file = tmp_path / "serve-spark-1-vllm-api-key"
    code, output = run_playbook(CONVERGE, {"vllm_serve_api_key_file": str(key_file)}, scenario=SCENARIO, options=("--check",))
    assert code == 0, output[-3000:]
    assert not key_file.exists()
    # The converged server is untouched.
    assert node("serve-spark-1").check_output(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}") == "true"
