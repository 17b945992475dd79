"""The doctor's findings on a cluster (playbooks/doctor.yml), from the readings of the e2e pair captured in the lab.

fixtures/doctor/<case>/<node>.json are real readings, captured with lab/doctor-capture/capture.sh from the converged e2e
pair: healthy with its Ray cluster; with the worker's Ray container stopped (`docker stop sparkinfer-ray`, drill 5's fault);
with the fabric cut in the worker's firewall (drill 2's fault); with the inventory naming a new image built on the head
only (`-e vllm_image_name=doctor-probe:1`, `FROM` the lab image with a label) and the head's INPUT jump to Ray's chain
deleted; and the `make site` pair (spark-1, spark-2) serving with mp after its worker rebooted (`docker restart spark-2`,
then a chat completion that the head never answered). The findings each case must give were read off the report doctor.yml printed for it. The rule tests change
one fact of the healthy reading, as a fault would.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.doctor import doctor_api_reading, doctor_findings
from ansible_collections.sparkinfer.cluster.plugins.module_utils._doctor import docker_time
from ansible_collections.sparkinfer.cluster.plugins.module_utils._fabric import SysfsReader, fabric_facts
from ansible_collections.sparkinfer.cluster.plugins.module_utils._gb10 import parse_smi_banner

FIXTURES = Path(__file__).parent / "fixtures" / "doctor"
HEAD, WORKER = "e2e-spark-1", "e2e-spark-2"
PAIR = [HEAD, WORKER]
# A ConnectX-7 HCA as fabric_facts gives it (its RETURN sample, from a Spark), for the RoCE rules the lab cannot reach.
SPARK_HCA = {
    "name": "rocep1s0f1",
    "netdev": "enp1s0f1np1",
    "port": 1,
    "state": "ACTIVE",
    "phys_state": "LinkUp",
    "roce_v2_ipv4_gids": [{"index": 3, "address": "192.168.100.10"}],
    "twin": "roceP2p1s0f1",
    "physical_port": 1,
}


def readings(case: str) -> list[dict]:
    return [json.loads((FIXTURES / case / f"{node}.json").read_text(encoding="utf-8")) for node in PAIR]


def problems(found: list[dict]) -> list[tuple[str, str, str, str]]:
    return [(entry["severity"], entry["area"], entry["node"], entry["what"]) for entry in found if entry["severity"] != "ok"]


def judged(case: str = "healthy-pair-with-ray", **changes) -> list[dict]:
    """The findings on the case's readings after changes, each {"node.path.to.key": value} applied to that node's reading."""
    pair = {reading["node"]: reading for reading in copy.deepcopy(readings(case))}
    for path, value in changes.items():
        node, *keys = path.split("__")
        target = pair[{"head": HEAD, "worker": WORKER}[node]]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return doctor_findings(list(pair.values()), HEAD, PAIR)


def only(found: list[dict]) -> dict:
    flagged = [entry for entry in found if entry["severity"] != "ok"]
    assert len(flagged) == 1, problems(found)
    return flagged[0]


def test_the_healthy_pair_passes_every_check():
    found = judged()
    assert problems(found) == []
    checks = [(entry["area"], entry["node"], entry["what"]) for entry in found]
    assert checks == [
        ("host", HEAD, "GPU visible"),
        ("host", HEAD, "driver branch 580"),
        ("host", HEAD, "memory"),
        ("fabric", HEAD, "fabric"),
        ("host", WORKER, "GPU visible"),
        ("host", WORKER, "driver branch 580"),
        ("host", WORKER, "memory"),
        ("fabric", WORKER, "fabric"),
        ("image", "cluster", "same image on every node"),
        ("ray", "cluster", "Ray"),
        ("vllm", HEAD, "vLLM rank running"),
        ("vllm", WORKER, "vLLM rank running"),
        ("vllm", HEAD, "API answers"),
        ("drift", HEAD, "the server runs what the inventory asks"),
    ]
    evidence = {(entry["area"], entry["node"], entry["what"]): entry["evidence"] for entry in found}
    assert evidence[("fabric", HEAD, "fabric")] == "eth0 192.168.183.11 MTU 9000, socket, 1 peer(s) answer unfragmented at the full MTU"
    assert evidence[("ray", "cluster", "Ray")] == "2 node(s) alive, 0 dead"
    assert evidence[("drift", HEAD, "the server runs what the inventory asks")] == "17 launch inputs compared"


# What inventory_node_problems says of the worker when its inventory sets vllm_serve_gpu_memory_utilization: 1.5
# (tests/unit/plugins/filter/test_inventory_rules.py).
UTILIZATION = "vllm_serve_gpu_memory_utilization is 1.5: gpu_memory_utilization (--gpu-memory-utilization) must be a number in (0, 1]."


def test_the_inventorys_values_are_one_check_and_each_problem_an_error_in_validate_inventorys_words():
    fine = doctor_findings(readings("healthy-pair-with-ray"), HEAD, PAIR, {HEAD: [], WORKER: []})
    assert problems(fine) == []
    assert [(entry["node"], entry["what"], entry["evidence"]) for entry in fine if entry["area"] == "inventory"] == [
        (HEAD, "the inventory's values pass the rules validate_inventory.yml judges", "2 node(s) judged")
    ]
    wrong = only(doctor_findings(readings("healthy-pair-with-ray"), HEAD, PAIR, {HEAD: [], WORKER: [UTILIZATION]}))
    assert (wrong["area"], wrong["node"], wrong["what"]) == ("inventory", WORKER, UTILIZATION)
    assert wrong["fix"] == "fix it in the inventory, then run site.yml"
    # Left out, the inventory is not judged: no check of it.
    assert not [entry for entry in judged() if entry["area"] == "inventory"]


def test_an_inventory_reading_that_is_not_node_by_node_problems_is_refused():
    with pytest.raises(AnsibleFilterError, match="expected inventory as inventory_node_problems returns it"):
        doctor_findings(readings("healthy-pair-with-ray"), HEAD, PAIR, [UTILIZATION])


def test_a_stopped_worker_ray_container_is_the_one_error_and_cluster_yml_the_fix():
    error = only(doctor_findings(readings("ray-worker-stopped"), HEAD, PAIR))
    assert (error["severity"], error["area"], error["node"], error["what"]) == ("error", "ray", WORKER, "the Ray container is exited")
    assert error["evidence"] == "sparkinfer-ray is exited (exit code 1)"
    assert error["fix"].startswith("run cluster.yml")


def test_a_cut_fabric_fails_both_ways_with_pings_lost_and_network_yml_the_fix():
    found = doctor_findings(readings("fabric-cut"), HEAD, PAIR)
    assert problems(found) == [
        ("error", "fabric", HEAD, f"the fabric fails towards {WORKER}"),
        ("error", "fabric", WORKER, f"the fabric fails towards {HEAD}"),
    ]
    assert found[0]["evidence"] == f"{HEAD} -> {WORKER} (192.168.183.12): 3 packets transmitted, 0 received, 100% packet loss, time 2033ms"
    assert "no firewall drops the peer's fabric address; then run network.yml" in found[0]["fix"]
    # Ray was not asked for (ray_cluster_state auto with the mp executor): its stopped worker is no finding.
    assert [entry for entry in found if entry["area"] == "ray"] == []


@pytest.mark.parametrize(
    ("changes", "expected", "fix"),
    [
        ({"worker__host__gpus": [], "worker__host__nvidia_smi_error": "nvidia-smi: not found"}, ("error", "no GPU visible"), "load the NVIDIA driver"),
        ({"worker__host__driver_version": "590.44.01"}, ("error", "driver branch not accepted"), "install a 580.x driver"),
        ({"worker__host__driver_version": "575.57.08"}, ("error", "driver branch not accepted"), "add the branch to gb10_host_supported_driver_branches"),
        (
            {"worker__host__kernel_module": "proprietary"},
            ("warning", "proprietary kernel modules"),
            "install the open kernel modules before the next driver update",
        ),
        # NVIDIA/NV-Kernels#590's Sparks: kernel 7.0.0-1019 with KHO on, CmaFree above CmaTotal 0 (MiaAI #259's figure).
        (
            {"worker__host__kernel_release": "7.0.0-1019-nvidia", "worker__host__memory_cma_total_kib": 0, "worker__host__memory_cma_free_kib": 940604},
            ("error", "kexec-handover scratch area"),
            "add kho=off to GRUB_CMDLINE_LINUX_DEFAULT",
        ),
        ({"worker__host__docker_error": "Cannot connect to the Docker daemon"}, ("error", "Docker does not answer"), "systemctl enable --now docker"),
        ({"worker__host__docker_nvidia_runtime": False}, ("error", "Docker has no NVIDIA runtime"), "run host.yml: gb10_host registers it"),
        (
            {"worker__host__memory_available_kib": 2 * 1048576},
            ("warning", "memory nearly exhausted beside the running server"),
            "lower --gpu-memory-utilization",
        ),
        ({"worker__host__disk_free_bytes": 5 * 1073741824}, ("warning", "little disk free"), "docker image prune"),
        ({"worker__host__earlyoom_wanted": True}, ("warning", "earlyoom is not running"), "systemctl enable --now earlyoom"),
    ],
)
def test_each_host_rule_names_what_it_found_and_the_fix(changes, expected, fix):
    finding = only(judged(**changes))
    assert (finding["node"], (finding["severity"], finding["what"])) == (WORKER, expected)
    assert fix in finding["fix"]


def stopped_worker_rank(**changes) -> list[dict]:
    return judged(worker__vllm__container={"name": "sparkinfer-vllm", "status": "exited", "exit_code": 137, "oom_killed": True}, **changes)


def test_a_stopped_rank_is_named_with_its_exit_and_memory_is_judged_for_the_next_launch():
    found = stopped_worker_rank()
    assert problems(found) == [("error", "vllm", WORKER, "the vLLM rank is exited")]
    assert found[0]["evidence"] == "sparkinfer-vllm is exited (exit code 137, killed for lack of memory)"
    # The page cache holds what the launch lacks: dropping it is the fix.
    found = stopped_worker_rank(worker__host__required_memory_available_gib=15)
    memory = next(entry for entry in found if entry["area"] == "host")
    assert (memory["severity"], memory["what"]) == ("error", "too little free memory for the next launch")
    assert "drop the page cache" in memory["fix"]
    found = stopped_worker_rank(worker__host__required_memory_available_gib=100)
    assert "spread the model over more nodes" in next(entry for entry in found if entry["area"] == "host")["fix"]


def renamed(env: dict, **values) -> dict:
    return {**env, **values}


HEALTHY_ENV = readings("healthy-pair-with-ray")[1]["fabric"]["env"]


@pytest.mark.parametrize(
    ("changes", "what", "evidence"),
    [
        ({"worker__fabric__env": None}, "no NCCL environment file", "/etc/sparkinfer/nccl.env is missing"),
        ({"worker__fabric__env": renamed(HEALTHY_ENV, NCCL_SOCKET_IFNAME="enp1s0f0np0")}, "the NCCL interface is gone", "names enp1s0f0np0"),
        ({"worker__fabric__ipv4": {"eth0": "192.168.183.99", "lo": ""}}, "the fabric address changed", "eth0 holds 192.168.183.99"),
        ({"worker__fabric__mtu_wanted": 1500}, "MTU differs from the fabric's", "eth0 has MTU 9000, nccl_network_mtu is 1500"),
    ],
)
def test_each_fabric_rule_compares_the_environment_file_with_what_the_node_has_now(changes, what, evidence):
    finding = only(judged(**changes))
    assert (finding["severity"], finding["node"], finding["what"]) == ("error", WORKER, what)
    assert evidence in finding["evidence"]


def test_a_fabric_with_a_problem_is_not_also_called_fine():
    found = judged(worker__fabric__mtu_wanted=1500)
    assert [entry["what"] for entry in found if entry["area"] == "fabric" and entry["node"] == WORKER] == ["MTU differs from the fabric's"]


def test_a_down_interface_is_named():
    netdevs = [{**netdev, "operstate": "down"} for netdev in readings("healthy-pair-with-ray")[1]["fabric"]["netdevs"]]
    assert only(judged(worker__fabric__netdevs=netdevs))["what"] == "the NCCL interface is down"


@pytest.mark.parametrize(
    ("hca", "env", "what"),
    [
        (SPARK_HCA, {"NCCL_IB_HCA": "roceP2p1s0f1"}, "NCCL names an HCA this node lacks: roceP2p1s0f1"),
        ({**SPARK_HCA, "state": "DOWN", "phys_state": "Polling"}, {"NCCL_IB_HCA": "rocep1s0f1"}, "ConnectX-7 twin rocep1s0f1 is not up"),
        (SPARK_HCA, {"NCCL_IB_HCA": "rocep1s0f1", "NCCL_IB_GID_INDEX": "4"}, "the pinned GID index is no RoCE v2 IPv4 GID now"),
    ],
)
def test_each_roce_rule_checks_the_hcas_nccl_is_told_to_use(hca, env, what):
    found = judged(worker__fabric__hcas=[hca], worker__fabric__env=renamed(HEALTHY_ENV, NCCL_IB_DISABLE="0", **env))
    assert only(found)["what"] == what
    # NCCL_IB_HCA may name an HCA's port too.
    fine = renamed(HEALTHY_ENV, NCCL_IB_DISABLE="0", NCCL_IB_HCA="rocep1s0f1:1", NCCL_IB_GID_INDEX="3")
    assert problems(judged(worker__fabric__hcas=[SPARK_HCA], worker__fabric__env=fine)) == []


def test_images_missing_or_different_and_a_server_on_an_older_image():
    assert only(judged(worker__vllm__image__id=""))["what"] == "the image is missing"
    different = judged(worker__vllm__image__id="sha256:0123456789abcdef0123")
    # The worker's rank still runs the image it was started on, which the worker no longer holds under that name.
    assert problems(different) == [
        ("error", "image", "cluster", "the nodes hold different images"),
        ("warning", "image", WORKER, "the server runs another image than the inventory's"),
    ]
    assert different[0]["fix"] == "run image.yml: it copies the head's image to the workers"
    older = judged(head__vllm__image__id="sha256:0123456789abcdef0123", worker__vllm__image__id="sha256:0123456789abcdef0123")
    assert problems(older) == [
        ("warning", "image", HEAD, "the server runs another image than the inventory's"),
        ("warning", "image", WORKER, "the server runs another image than the inventory's"),
    ]


def test_an_image_that_lost_the_served_architecture_is_named_with_vllm_image_infos_words():
    # vllm_image_info's message for an image without the model's class, as drill 1 of the e2e scenario prints it.
    lacks = "sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferDrillMoeForCausalLM; use an image whose vLLM lists it"
    finding = only(judged(head__vllm__image__lacks=lacks))
    assert (finding["severity"], finding["node"], finding["what"], finding["evidence"]) == ("error", HEAD, "the image lacks the served architecture", lacks)


def test_a_new_image_under_the_inventorys_name_and_rays_jump_removed_are_each_named():
    found = doctor_findings(readings("new-image-tag-and-ray-jump-removed"), HEAD, PAIR)
    assert problems(found) == [
        ("error", "image", WORKER, "the image is missing"),
        ("error", "ray", HEAD, "Ray's ports are open to every network"),
        ("warning", "image", HEAD, "the image's model classes were never read"),
        ("warning", "image", HEAD, "the server runs another image than the inventory's"),
        ("warning", "drift", HEAD, "vllm_serve_image differs from the inventory"),
    ]
    flagged = {entry["what"]: entry for entry in found}
    assert flagged["the image's model classes were never read"]["evidence"] == "no probe of doctor-probe:1 sha256:85e37e24d72e is kept on e2e-spark-1"
    assert flagged["the image's model classes were never read"]["fix"] == "run image.yml: its gate reads them and keeps the answer"
    assert flagged["Ray's ports are open to every network"]["fix"] == "run cluster.yml: its firewall phase puts the chain and its jump back"
    assert (
        flagged["vllm_serve_image differs from the inventory"]["evidence"]
        == "the server runs 'sparkinfer-lab-vllm:latest', the inventory asks 'doctor-probe:1'"
    )


def test_ray_s_ports_open_over_ipv6_alone_are_named_by_family():
    # The chain and its jump are in iptables, not in ip6tables: Ray's ports answer over IPv6.
    found = only(judged(head__ray__firewall_guards=False, head__ray__firewall_open=["ip6tables"]))
    assert (found["what"], found["evidence"]) == (
        "Ray's ports are open to every network",
        "INPUT of ip6tables sends nothing to the chain SPARKINFER-RAY, which lets only the cluster's nodes reach Ray",
    )


def test_the_mp_rendezvous_port_open_is_an_error_and_serve_yml_the_fix():
    found = only(
        judged(
            head__vllm__firewall_wanted=True,
            head__vllm__firewall_chain="SPARKINFER-VLLM",
            head__vllm__firewall_guards=False,
            head__vllm__firewall_open=["iptables", "ip6tables"],
        )
    )
    assert (found["severity"], found["node"], found["what"], found["fix"]) == (
        "error",
        HEAD,
        "the mp rendezvous port is open to every network",
        "run serve.yml: its firewall phase puts the chain and its jump back",
    )
    assert (found["area"], found["evidence"]) == (
        "vllm",
        "INPUT of iptables and ip6tables sends nothing to the chain SPARKINFER-VLLM, which lets only the cluster's nodes reach "
        "PyTorch's TCPStore (it authenticates nobody)",
    )
    # Guarded, not read, or not wanted (one node, the Ray executor): nothing to say.
    for guards, wanted in ((True, True), (None, True), (False, False)):
        assert problems(judged(head__vllm__firewall_wanted=wanted, head__vllm__firewall_guards=guards)) == []


def test_ray_rules_a_node_without_raylet_or_not_alive_and_no_ray_when_not_asked_for():
    assert only(judged(worker__ray__raylet_node_id="", worker__ray__raylet_problem="no raylet process"))["evidence"] == "no raylet process"
    gone = only(judged(worker__ray__raylet_node_id="d7369bc8" + "0" * 48))
    assert (gone["what"], gone["evidence"]) == ("not ALIVE in the head's Ray cluster", "raylet d7369bc80000 is not listed there")
    quiet = judged(head__ray__expected=False, worker__ray__expected=False)
    assert [entry for entry in quiet if entry["area"] == "ray"] == []


def test_vllm_rules_record_restarts_log_failure_readiness_and_api():
    assert only(judged(head__vllm__record={}))["what"] == "no vLLM server was launched"
    restarted = only(judged(worker__vllm__container={"name": "sparkinfer-vllm", "status": "running", "restart_count": 2}))
    assert (restarted["severity"], restarted["evidence"]) == ("warning", "sparkinfer-vllm restarted 2 time(s)")
    head_log = readings("healthy-pair-with-ray")[0]["vllm"]["log"]
    crashed = {**head_log, "outcome": "failed", "error": {"category": "oom", "line": "torch.OutOfMemoryError: ...", "hint": "Lower --gpu-memory-utilization"}}
    failure = only(judged(head__vllm__log=crashed))
    assert (failure["what"], failure["fix"]) == ("vLLM failed: oom", "Lower --gpu-memory-utilization")
    starting = only(judged(head__vllm__log={**head_log, "outcome": "starting", "stage": "loading_weights"}))
    assert (starting["what"], starting["evidence"]) == ("vLLM is not ready", "vLLM's log shows starting at loading_weights")
    wrong_key = only(judged(head__vllm__api={"health_status": 401, "models_status": 401, "models": [], "problem": "HTTP Error 401"}))
    assert wrong_key["fix"].startswith("the API key differs")
    refused = only(judged(head__vllm__api={"health_status": -1, "models_status": -1, "models": [], "problem": "Connection refused"}))
    assert refused["evidence"] == "http://192.168.183.11:8000/v1: /health -1, /v1/models -1 Connection refused"
    other = only(judged(head__vllm__api={"health_status": 200, "models_status": 200, "models": ["other"], "problem": ""}))
    assert other["what"] == "the API does not list the served model"


def test_drift_names_each_input_that_differs_and_hides_extra_envs_values():
    inputs = readings("healthy-pair-with-ray")[0]["vllm"]["inputs"]
    wanted = {**inputs["wanted"], "vllm_serve_max_model_len": 1024, "vllm_serve_extra_env": {"HF_TOKEN": "hf_secret"}}
    found = judged(head__vllm__inputs={"current": inputs["current"], "wanted": wanted})
    drift = {entry["what"]: entry["evidence"] for entry in found if entry["area"] == "drift"}
    assert drift == {
        "vllm_serve_extra_env differs from the inventory": "differs from the inventory",
        "vllm_serve_max_model_len differs from the inventory": f"the server runs {inputs['current']['vllm_serve_max_model_len']!r}, the inventory asks 1024",
    }
    assert "hf_secret" not in json.dumps(found)


def test_a_member_without_a_reading_is_an_error_and_errors_come_first():
    found = doctor_findings(readings("healthy-pair-with-ray")[:1], HEAD, PAIR)
    assert problems(found) == [("error", "node", WORKER, "the node could not be read")]
    assert found[0]["severity"] == "error"
    assert doctor_findings([], HEAD, PAIR)[0]["node"] == HEAD


def test_readings_that_are_not_a_list_of_nodes_are_refused():
    with pytest.raises(AnsibleFilterError, match="expected a list of the nodes' readings"):
        doctor_findings({"node": HEAD}, HEAD, PAIR)
    with pytest.raises(AnsibleFilterError, match="a reading lacks what the doctor judges"):
        doctor_findings([{"node": HEAD, "vllm": {}}], HEAD, PAIR)


# What nccl_network writes for a cluster of one node (the nccl_loopback filter), on the head's healthy reading.
LOOPBACK_ENV = {"MASTER_ADDR": "127.0.0.1", "NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "lo", "VLLM_HOST_IP": "127.0.0.1"}
DOWN_PORT = [
    {**SPARK_HCA, "state": "DOWN", "phys_state": "Disabled"},
    {**SPARK_HCA, "name": "roceP2p1s0f1", "netdev": "enP2p1s0f1np1", "state": "DOWN", "phys_state": "Disabled"},
]


def alone(**fabric) -> list[dict]:
    """The fabric findings on the head's healthy reading judged as a cluster of one node, with these fabric values."""
    reading = copy.deepcopy(readings("healthy-pair-with-ray")[0])
    reading["fabric"].update(fabric, pings=[])
    return [entry for entry in doctor_findings([reading], HEAD, [HEAD]) if entry["area"] == "fabric"]


def test_a_node_alone_on_loopback_with_its_port_down_needs_no_fabric():
    found = alone(env=LOOPBACK_ENV, hcas=DOWN_PORT, fabric_port=1)
    assert [(entry["severity"], entry["what"]) for entry in found] == [("ok", "no fabric needed")]
    assert found[0]["evidence"] == (
        "a cluster of one node: its ranks use lo 127.0.0.1; ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), "
        "roceP2p1s0f1 (enP2p1s0f1np1) DOWN (Disabled); no port is up"
    )
    # The same reading in a pair: the fabric interface is gone.
    assert problems(judged(head__fabric__env=LOOPBACK_ENV))[0][3] == "the NCCL interface is gone"


def test_a_node_alone_is_judged_on_what_its_ranks_bind_to_only():
    # Its old fabric environment still binds the ranks: a changed address is an error, an MTU or a missing ping is not.
    assert [entry["what"] for entry in alone(mtu_wanted=1500, hcas=DOWN_PORT)] == ["no fabric needed"]
    assert [entry["what"] for entry in alone(ipv4={"eth0": "192.168.183.99"})] == ["the fabric address changed"]
    assert [entry["what"] for entry in alone(env=None)] == ["no NCCL environment file"]


def test_the_compat_driver_of_the_heads_image_is_judged_over_the_heads_driver():
    # NGC vLLM 26.01 on a GB10: "Using CUDA 13.1 driver version 590.48.01 with kernel driver version 580.126.09".
    finding = only(judged(head__host__driver_version="580.126.09", head__vllm__image__compat_driver_version="590.48.01"))
    assert (finding["severity"], finding["area"], finding["node"], finding["what"]) == (
        "warning",
        "image",
        HEAD,
        "CUDA forward-compatibility driver in the image",
    )
    assert finding["evidence"].startswith("the image carries CUDA's forward-compatibility driver 590.48.01 for the host's 580.126.09")
    # An image without one: the host's driver runs, said as fine.
    fine = [entry for entry in judged(head__vllm__image__compat_driver_version="") if entry["area"] == "image" and entry["node"] == HEAD]
    assert [(entry["severity"], entry["what"]) for entry in fine] == [("ok", "CUDA driver of the image")]


# The worker booted at 2026-12-07 08:40:00 UTC; its rank had started at 08:30:00 UTC (Docker's nanosecond stamp).
BOOTED = 1796632800.0
RANK_BEFORE_THE_BOOT = {"name": "sparkinfer-vllm", "status": "exited", "exit_code": 0, "oom_killed": False, "started_at": "2026-12-07T08:30:00.123456789Z"}


def test_a_rank_that_started_before_its_node_booted_is_named_as_a_reboot_with_serve_yml_the_fix():
    rebooted = only(judged(worker__host__boot_time=BOOTED, worker__vllm__container=RANK_BEFORE_THE_BOOT))
    assert (rebooted["node"], rebooted["what"]) == (WORKER, "the node rebooted under the vLLM server")
    assert rebooted["evidence"] == (
        f"{WORKER} booted at 2026-12-07 08:40:00 UTC, after sparkinfer-vllm started at 2026-12-07 08:30:00 UTC; it is exited (exit code 0)"
    )
    assert "Docker does not start a vLLM rank again, by design" in rebooted["fix"]
    assert rebooted["fix"].endswith("run serve.yml, which starts every rank again and gates on vLLM's log")


@pytest.mark.parametrize(
    ("boot_time", "started_at"),
    [
        # Started after the boot: a rank that stopped on its own.
        (BOOTED, "2026-12-07T08:40:00.5Z"),
        # Never started (Docker's zero time), or a boot time that could not be read.
        (BOOTED, "0001-01-01T00:00:00Z"),
        (None, "2026-12-07T08:30:00Z"),
    ],
)
def test_a_stopped_rank_is_no_reboot_unless_it_started_before_the_boot(boot_time, started_at):
    stopped = only(judged(worker__host__boot_time=boot_time, worker__vllm__container={**RANK_BEFORE_THE_BOOT, "started_at": started_at}))
    assert (stopped["what"], stopped["evidence"]) == ("the vLLM rank is exited", "sparkinfer-vllm is exited (exit code 0)")


def test_a_running_rank_that_started_before_the_boot_reading_is_no_reboot():
    # A container that survived a boot time read wrong is running: nothing to restart.
    running = {**RANK_BEFORE_THE_BOOT, "status": "running", "restart_count": 0}
    assert problems(judged(worker__host__boot_time=BOOTED, worker__vllm__container=running)) == []


def test_a_worker_that_rebooted_under_the_server_is_named_and_so_is_the_head_rank_that_lost_it():
    # Read off the report of the real case: the worker's rank exited with its node (255: Docker's daemon went down under
    # it), the head's rank runs on with the error its pipeline stage hit when the worker's closed the connection, and the
    # lab node's two Docker networks came back in the other order (eth0 and eth1 swapped), which the fabric rules name.
    lab_pair = ["spark-1", "spark-2"]
    found = doctor_findings([json.loads((FIXTURES / "worker-rebooted" / f"{node}.json").read_text(encoding="utf-8")) for node in lab_pair], "spark-1", lab_pair)
    assert problems(found) == [
        ("error", "fabric", "spark-2", "the fabric address changed"),
        ("error", "fabric", "spark-2", "MTU differs from the fabric's"),
        ("error", "fabric", "spark-2", "the fabric fails towards spark-1"),
        ("error", "vllm", "spark-1", "vLLM failed: other_error"),
        ("error", "vllm", "spark-2", "the node rebooted under the vLLM server"),
    ]
    rebooted = found[4]
    assert rebooted["evidence"] == (
        "spark-2 booted at 2026-12-07 08:26:20 UTC, after sparkinfer-vllm started at 2026-12-07 08:23:08 UTC; it is exited (exit code 255)"
    )
    assert "Connection closed by peer [192.168.177.12]:47339" in found[3]["evidence"]


def api_answers(case: str) -> list:
    return json.loads((FIXTURES / "api" / f"uri-health-models-{case}.json").read_text(encoding="utf-8"))


def test_what_the_api_answered_is_read_off_the_real_uri_results():
    assert doctor_api_reading(api_answers("ok")) == {"health_status": 200, "models_status": 200, "problem": "OK (484 bytes)", "models": ["tiny-qwen3-moe"]}
    assert doctor_api_reading(api_answers("401")) == {
        "health_status": 200,
        "models_status": 401,
        "problem": "Status code was 401 and not [200]: HTTP Error 401: Unauthorized",
        "models": [],
    }
    # Not asked (the loop skipped): nothing to judge.
    assert doctor_api_reading([{"skipped": True, "item": "/health"}, {"skipped": True, "item": "/v1/models"}]) == {}
    with pytest.raises(AnsibleFilterError, match="doctor_api_reading: expected the uri results"):
        doctor_api_reading({"status": 200})


def test_only_a_running_rank_on_another_image_is_said_to_run_it():
    # The worker-rebooted readings, changed in one fact: each node's image under the inventory's name is now another build
    # (sha256:85e37e24d72e..., the id of doctor-probe:1 in the new-image-tag-and-ray-jump-removed readings), as after
    # image.yml loaded a rebuild. Both ranks were started on the old image (sha256:5e866db54fce..., as read): the head's
    # runs it and is warned about; the worker's exited with its node (status "exited", exit code 255, as read) and serves
    # nothing, so it is no server on another image (the rule's check that the rank is running).
    lab_pair = ["spark-1", "spark-2"]
    pair = [json.loads((FIXTURES / "worker-rebooted" / f"{node}.json").read_text(encoding="utf-8")) for node in lab_pair]
    new_build = readings("new-image-tag-and-ray-jump-removed")[0]["vllm"]["image"]["id"]
    for reading in pair:
        assert reading["vllm"]["container"]["image_id"] == reading["vllm"]["image"]["id"] != new_build
        reading["vllm"]["image"]["id"] = new_build
    assert [reading["vllm"]["container"]["status"] for reading in pair] == ["running", "exited"]
    found = doctor_findings(pair, "spark-1", lab_pair)
    other_image = [entry for entry in found if entry["what"] == "the server runs another image than the inventory's"]
    assert [(entry["severity"], entry["node"]) for entry in other_image] == [("warning", "spark-1")]
    assert other_image[0]["evidence"] == "running sha256:5e866db54fce, sparkinfer-lab-vllm:latest is sha256:85e37e24d72e"
    # The worker's stopped rank is still named, for what it is.
    assert ("error", "vllm", "spark-2", "the node rebooted under the vLLM server") in problems(found)


# What gb10_host's platform rows cite for the 580 branch (module_utils/_platform.py), as the report prints it.
DEEPOPS = "NVIDIA/deepops roles/nvidia-dgx/vars/ubuntu-24.04.yml @ 03e19e9582852da024edc88e8345baec79377155 (DGX Spark: nvidia-driver-580-open)"
FIX_ENV = "run network.yml to write the environment again, then serve.yml (and cluster.yml with Ray) to restart on it"


def finding(*fields: str) -> dict:
    """A finding whole: its severity, area, node, what, evidence and fix."""
    return dict(zip(("severity", "area", "node", "what", "evidence", "fix"), fields, strict=True))


def of_area(found: list[dict], area: str) -> list[dict]:
    return [entry for entry in found if entry["area"] == area]


def test_each_check_of_the_healthy_pair_says_what_it_read_and_asks_no_fix():
    found = judged()
    assert [entry["fix"] for entry in found] == [""] * len(found)
    evidence = {(entry["area"], entry["node"], entry["what"]): entry["evidence"] for entry in found}
    assert evidence[("host", HEAD, "GPU visible")] == "NVIDIA GB10 (SM 12.1)"
    assert evidence[("host", WORKER, "driver branch 580")] == f"NVIDIA driver 580.173.02: the branch DGX OS ships for the Spark (source: {DEEPOPS})"
    assert evidence[("image", "cluster", "same image on every node")] == "sparkinfer-lab-vllm:latest sha256:c83817061141"
    # The head's log reached ready; the worker's rank logs no further than its weights.
    assert evidence[("vllm", HEAD, "vLLM rank running")] == "sparkinfer-vllm, log at ready"
    assert evidence[("vllm", WORKER, "vLLM rank running")] == "sparkinfer-vllm, log at weights_loaded"
    assert evidence[("vllm", HEAD, "API answers")] == (
        "http://192.168.183.11:8000/v1 serving tiny-qwen3-moe; 0 running, 0 waiting, KV cache 0.0% used, 23 prompt and 8 generated tokens since start"
    )


def test_a_running_rank_whose_log_was_not_read_says_so():
    found = judged(worker__vllm__log={})
    assert [entry["evidence"] for entry in found if entry["what"] == "vLLM rank running" and entry["node"] == WORKER] == ["sparkinfer-vllm, log at ?"]


def test_a_member_without_a_reading_is_named_beside_the_inventorys_check():
    found = doctor_findings(readings("healthy-pair-with-ray")[:1], HEAD, PAIR, {HEAD: [], WORKER: []})
    assert found[0] == finding(
        "error", "node", WORKER, "the node could not be read", "unreachable, or a read failed (see the play's output above)", "check SSH to it and sudo"
    )
    assert [(entry["severity"], entry["what"]) for entry in of_area(found, "inventory")] == [
        ("ok", "the inventory's values pass the rules validate_inventory.yml judges")
    ]


def test_an_inventory_problem_is_an_error_of_its_node_and_a_node_the_rules_did_not_judge_has_none():
    wrong = only(doctor_findings(readings("healthy-pair-with-ray"), HEAD, PAIR, {WORKER: [UTILIZATION]}))
    assert wrong == finding(
        "error",
        "inventory",
        WORKER,
        UTILIZATION,
        "the inventory's value, by the rules validate_inventory.yml judges",
        "fix it in the inventory, then run site.yml",
    )


@pytest.mark.parametrize(
    ("changes", "what", "evidence", "fix"),
    [
        ({"worker__fabric__env": None}, "no NCCL environment file", "/etc/sparkinfer/nccl.env is missing", "run network.yml"),
        (
            {"worker__fabric__env": renamed(HEALTHY_ENV, NCCL_SOCKET_IFNAME="enp1s0f0np0")},
            "the NCCL interface is gone",
            "/etc/sparkinfer/nccl.env names enp1s0f0np0, which this node no longer has "
            "(interfaces: docker0, enP2p1s0f1np1, enP2p1s0f1np1-x, enp1s0f1np1, enp1s0f1np1-x, eth0)",
            FIX_ENV,
        ),
        (
            {"worker__fabric__ipv4": {"eth0": "192.168.183.99", "lo": ""}},
            "the fabric address changed",
            "/etc/sparkinfer/nccl.env says VLLM_HOST_IP=192.168.183.12, eth0 holds 192.168.183.99",
            FIX_ENV,
        ),
        # eth0 lost its address: the role reads '' for an interface without one.
        (
            {"worker__fabric__ipv4": {**readings("healthy-pair-with-ray")[1]["fabric"]["ipv4"], "eth0": ""}},
            "the fabric address changed",
            "/etc/sparkinfer/nccl.env says VLLM_HOST_IP=192.168.183.12, eth0 holds no IPv4 address",
            FIX_ENV,
        ),
        (
            {"worker__fabric__netdevs": [{**netdev, "operstate": "down"} for netdev in readings("healthy-pair-with-ray")[1]["fabric"]["netdevs"]]},
            "the NCCL interface is down",
            "eth0 is down",
            "check the cable and `ip link`",
        ),
        (
            {"worker__fabric__mtu_wanted": 1500},
            "MTU differs from the fabric's",
            "eth0 has MTU 9000, nccl_network_mtu is 1500",
            "run network.yml (firmware updates reset ConnectX-7 to 1500); both ends need the same MTU",
        ),
    ],
)
def test_each_fabric_finding_names_the_node_what_it_read_and_the_fix(changes, what, evidence, fix):
    assert only(judged(**changes)) == finding("error", "fabric", WORKER, what, evidence, fix)


def test_an_interface_whose_operstate_is_unknown_is_not_down():
    # Drivers that report no carrier state (as virtual interfaces do) show "unknown": NCCL may use it.
    netdevs = [{**netdev, "operstate": "unknown"} for netdev in readings("healthy-pair-with-ray")[1]["fabric"]["netdevs"]]
    assert problems(judged(worker__fabric__netdevs=netdevs)) == []


def test_a_failed_ping_names_both_ends_and_the_fix_and_a_peer_not_read_has_no_address():
    found = doctor_findings(readings("fabric-cut"), HEAD, PAIR)
    assert found[0]["fix"] == (
        "check both ends' MTU (`ip link`), that the cable sits in the same port on both nodes, that the addresses share "
        "their subnets, and that no firewall drops the peer's fabric address; then run network.yml"
    )
    # The worker could not be read: the head's ping towards it is named without its address.
    head_only = doctor_findings(readings("fabric-cut")[:1], HEAD, PAIR)
    ping = next(entry for entry in head_only if entry["area"] == "fabric")
    assert ping["evidence"] == f"{HEAD} -> {WORKER} (?): 3 packets transmitted, 0 received, 100% packet loss, time 2033ms"


def test_a_failed_ping_that_printed_nothing_is_no_answer():
    pair = copy.deepcopy(readings("fabric-cut"))
    # The same failed ping, had it printed nothing.
    pair[0]["fabric"]["pings"][0]["said"] = ""
    ping = next(entry for entry in doctor_findings(pair, HEAD, PAIR) if entry["node"] == HEAD and entry["area"] == "fabric")
    assert ping["evidence"] == f"{HEAD} -> {WORKER} (192.168.183.12): no answer"


# The other half of the Spark's ConnectX-7 port 1, as fabric_facts lists it beside SPARK_HCA (DOWN_PORT's names).
SPARK_TWIN = {**SPARK_HCA, "name": "roceP2p1s0f1", "netdev": "enP2p1s0f1np1"}


def roce(hcas: list[dict], **env) -> list[dict]:
    """The worker's fabric findings with these HCAs and its environment file given these NCCL variables."""
    found = judged(worker__fabric__hcas=hcas, worker__fabric__env=renamed(HEALTHY_ENV, **env))
    return [entry for entry in of_area(found, "fabric") if entry["node"] == WORKER]


@pytest.mark.parametrize(
    ("hcas", "env", "what", "evidence", "fix"),
    [
        (
            [SPARK_HCA, SPARK_TWIN],
            {"NCCL_IB_HCA": "rocep1s0f0"},
            "NCCL names an HCA this node lacks: rocep1s0f0",
            "HCAs: roceP2p1s0f1, rocep1s0f1",
            "run network.yml",
        ),
        (
            [{**SPARK_HCA, "state": "DOWN", "phys_state": "Polling"}],
            {"NCCL_IB_HCA": "rocep1s0f1"},
            "ConnectX-7 twin rocep1s0f1 is not up",
            "rocep1s0f1 (enp1s0f1np1) is DOWN (Polling)",
            "check that the cable sits in the same port on both nodes and that the peer is powered on",
        ),
        (
            [SPARK_HCA],
            {"NCCL_IB_HCA": "rocep1s0f1", "NCCL_IB_GID_INDEX": "4"},
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            "NCCL_IB_GID_INDEX=4, RoCE v2 IPv4 GIDs at 3 on rocep1s0f1",
            "unset nccl_network_ib_gid_index (NCCL picks each HCA's GID itself; indices drift) and run network.yml",
        ),
        # The HCA lost its RoCE v2 IPv4 GIDs (its interface lost its address).
        (
            [{**SPARK_HCA, "roce_v2_ipv4_gids": []}],
            {"NCCL_IB_HCA": "rocep1s0f1", "NCCL_IB_GID_INDEX": "3"},
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            "NCCL_IB_GID_INDEX=3, RoCE v2 IPv4 GIDs at no index on rocep1s0f1",
            "unset nccl_network_ib_gid_index (NCCL picks each HCA's GID itself; indices drift) and run network.yml",
        ),
    ],
)
def test_each_roce_finding_names_the_node_the_hcas_and_the_fix(hcas, env, what, evidence, fix):
    assert roce(hcas, NCCL_IB_DISABLE="0", **env) == [finding("error", "fabric", WORKER, what, evidence, fix)]


def test_nccl_may_name_several_hcas_or_none_and_the_hcas_are_judged_only_with_ib_on():
    fine = [("ok", "fabric")]
    assert [(entry["severity"], entry["what"]) for entry in roce([SPARK_HCA, SPARK_TWIN], NCCL_IB_DISABLE="0", NCCL_IB_HCA="rocep1s0f1,roceP2p1s0f1")] == fine
    # Without NCCL_IB_HCA, NCCL picks the HCAs itself.
    assert [(entry["severity"], entry["what"]) for entry in roce([SPARK_HCA], NCCL_IB_DISABLE="0")] == fine
    # IB off, or NCCL_IB_DISABLE unset (NCCL's socket transport, as nccl_network writes it): NCCL_IB_HCA is not read.
    assert [(entry["severity"], entry["what"]) for entry in roce([SPARK_HCA], NCCL_IB_DISABLE="1", NCCL_IB_HCA="rocep1s0f0")] == fine
    no_switch = {name: value for name, value in HEALTHY_ENV.items() if name != "NCCL_IB_DISABLE"}
    found = judged(worker__fabric__hcas=[SPARK_HCA], worker__fabric__env={**no_switch, "NCCL_IB_HCA": "rocep1s0f0"})
    assert [(entry["severity"], entry["what"]) for entry in of_area(found, "fabric") if entry["node"] == WORKER] == fine


def test_a_stopped_ray_container_is_the_only_ray_finding_and_its_fix_restarts_it():
    found = of_area(doctor_findings(readings("ray-worker-stopped"), HEAD, PAIR), "ray")
    assert found == [
        finding(
            "error",
            "ray",
            WORKER,
            "the Ray container is exited",
            "sparkinfer-ray is exited (exit code 1)",
            "run cluster.yml: it starts the node's Ray container again and waits until it rejoins the head",
        )
    ]
    # Stopped cleanly (exit code 0): no exit code to name.
    pair = copy.deepcopy(readings("ray-worker-stopped"))
    pair[1]["ray"]["exit_code"] = 0
    assert [entry["evidence"] for entry in of_area(doctor_findings(pair, HEAD, PAIR), "ray")] == ["sparkinfer-ray is exited"]


def test_a_worker_without_raylet_is_the_only_ray_finding_with_its_reason_or_a_default_one():
    assert of_area(judged(worker__ray__raylet_node_id="", worker__ray__raylet_problem=""), "ray") == [
        finding("error", "ray", WORKER, "no Ray raylet", "no raylet answers in the container", "run cluster.yml")
    ]


WORKER_RAYLET = "8e977202085555f99893696e752ba3f6d9b91fa56a8875a0215d5f1a"


def test_a_raylet_the_head_does_not_list_alive_is_the_only_ray_finding_with_its_state_there():
    assert of_area(judged(worker__ray__raylet_node_id="d7369bc8" + "0" * 48), "ray") == [
        finding(
            "error",
            "ray",
            WORKER,
            "not ALIVE in the head's Ray cluster",
            "raylet d7369bc80000 is not listed there",
            "run cluster.yml: it restarts the worker's Ray container against the head",
        )
    ]
    # The head's view lists the worker's raylet as DEAD.
    view = copy.deepcopy(readings("healthy-pair-with-ray")[0]["ray"]["cluster"])
    for entry in view["nodes"]:
        if entry["node_id"] == WORKER_RAYLET:
            entry["state"] = "DEAD"
    assert [entry["evidence"] for entry in of_area(judged(head__ray__cluster=view), "ray")] == ["raylet 8e9772020855 is DEAD there"]


def test_rays_ports_open_is_the_only_ray_finding_and_a_reading_without_families_names_none():
    # The healthy reading predates firewall_open: its INPUT chains are not named.
    assert of_area(judged(head__ray__firewall_guards=False), "ray") == [
        finding(
            "error",
            "ray",
            HEAD,
            "Ray's ports are open to every network",
            "INPUT sends nothing to the chain SPARKINFER-RAY, which lets only the cluster's nodes reach Ray",
            "run cluster.yml: its firewall phase puts the chain and its jump back",
        )
    ]


def test_a_healthy_ray_cluster_counts_its_dead_nodes_and_an_unread_view_counts_no_node():
    view = copy.deepcopy(readings("healthy-pair-with-ray")[0]["ray"]["cluster"])
    # The raylet the worker ran before its Ray container restarted, still listed, as DEAD.
    view["nodes"].append({**view["nodes"][1], "node_id": "d7369bc8" + "0" * 48, "state": "DEAD"})
    view["dead_nodes"] = 1
    assert [entry["evidence"] for entry in of_area(judged(head__ray__cluster=view), "ray")] == ["2 node(s) alive, 1 dead"]
    # `ray status` could not be read on the head: no node is judged against it, and none counted.
    assert [(entry["severity"], entry["evidence"]) for entry in of_area(judged(head__ray__cluster={}), "ray")] == [("ok", "? node(s) alive, 0 dead")]


def test_no_launch_record_is_one_error_and_site_yml_the_fix():
    assert only(judged(head__vllm__record={})) == finding(
        "error", "vllm", HEAD, "no vLLM server was launched", f"{HEAD} has no launch record", "run site.yml, or serve.yml"
    )


def test_a_rank_not_running_nor_exited_is_named_without_an_exit_and_serve_yml_the_fix():
    # Created by serve.yml, never started.
    created = {**RANK_BEFORE_THE_BOOT, "status": "created", "started_at": "0001-01-01T00:00:00Z"}
    assert only(judged(worker__vllm__container=created)) == finding(
        "error", "vllm", WORKER, "the vLLM rank is created", "sparkinfer-vllm is created", "run serve.yml: it starts every rank again and gates on vLLM's log"
    )


def test_a_restarted_rank_is_a_warning_that_points_at_its_log():
    restarted = only(judged(worker__vllm__container={"name": "sparkinfer-vllm", "status": "running", "restart_count": 2}))
    assert restarted == finding(
        "warning",
        "vllm",
        WORKER,
        "the vLLM rank restarted",
        "sparkinfer-vllm restarted 2 time(s)",
        f"read why in `docker logs sparkinfer-vllm` on {WORKER}",
    )


def test_a_rank_started_at_the_boot_itself_is_no_reboot():
    at_boot = {**RANK_BEFORE_THE_BOOT, "started_at": "2026-12-07T08:40:00Z"}
    assert only(judged(worker__host__boot_time=BOOTED, worker__vllm__container=at_boot))["what"] == "the vLLM rank is exited"


def test_a_reboot_names_its_times_in_utc_whatever_the_controllers_zone(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        rebooted = only(judged(worker__host__boot_time=BOOTED, worker__vllm__container=RANK_BEFORE_THE_BOOT))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert rebooted["evidence"] == (
        f"{WORKER} booted at 2026-12-07 08:40:00 UTC, after sparkinfer-vllm started at 2026-12-07 08:30:00 UTC; it is exited (exit code 0)"
    )
    assert rebooted["fix"] == (
        "Docker does not start a vLLM rank again, by design (a crashed rank stays down for its log to be read, and a rank "
        "alone cannot rejoin the others): run serve.yml, which starts every rank again and gates on vLLM's log"
    )


def test_a_head_whose_log_is_not_ready_is_named_with_its_stage():
    head_log = readings("healthy-pair-with-ray")[0]["vllm"]["log"]
    assert only(judged(head__vllm__log={**head_log, "outcome": "starting", "stage": "loading_weights"})) == finding(
        "error",
        "vllm",
        HEAD,
        "vLLM is not ready",
        "vLLM's log shows starting at loading_weights",
        "run serve.yml: its gate waits for the start-up and names a failure",
    )


def test_an_api_that_refuses_the_key_on_v1_models_only_is_a_key_that_differs():
    # The real answers with another key: /health is open, /v1/models answers 401.
    assert only(judged(head__vllm__api=doctor_api_reading(api_answers("401")))) == finding(
        "error",
        "vllm",
        HEAD,
        "the API does not answer",
        "http://192.168.183.11:8000/v1: /health 200, /v1/models 401 Status code was 401 and not [200]: HTTP Error 401: Unauthorized",
        "the API key differs from the server's: run serve.yml with the key it was started with",
    )


def test_an_api_that_refuses_the_key_on_health_is_a_key_that_differs_too():
    # A guard in front of the server that covers /health too: 401 there, and /v1/models never answered.
    api = {"health_status": 401, "models_status": -1, "models": [], "problem": "Connection refused"}
    assert only(judged(head__vllm__api=api))["fix"] == "the API key differs from the server's: run serve.yml with the key it was started with"


def test_an_api_that_does_not_answer_is_restarted_by_serve_yml_and_one_not_asked_shows_no_problem():
    refused = only(judged(head__vllm__api={"health_status": -1, "models_status": -1, "models": [], "problem": "Connection refused"}))
    assert refused["fix"] == "run serve.yml: it restarts the server and smoke-tests it"
    # The loop was skipped: doctor_api_reading gives nothing, and nothing follows the statuses.
    skipped = doctor_api_reading([{"skipped": True, "item": "/health"}, {"skipped": True, "item": "/v1/models"}])
    assert only(judged(head__vllm__api=skipped))["evidence"] == "http://192.168.183.11:8000/v1: /health None, /v1/models None"


def test_an_api_that_lists_other_models_or_none_names_them_and_serve_yml_the_fix():
    other = only(judged(head__vllm__api={"health_status": 200, "models_status": 200, "models": ["other", "another"], "problem": ""}))
    assert other == finding(
        "error",
        "vllm",
        HEAD,
        "the API does not list the served model",
        "/health 200, /v1/models 200, listing other, another, not tiny-qwen3-moe",
        "run serve.yml",
    )
    empty = only(judged(head__vllm__api={"health_status": 200, "models_status": 200, "models": [], "problem": ""}))
    assert empty["evidence"] == "/health 200, /v1/models 200, listing nothing, not tiny-qwen3-moe"


def test_image_findings_name_the_node_what_differs_and_the_fix():
    missing = judged(worker__vllm__image__id="")
    assert only(missing) == finding("error", "image", WORKER, "the image is missing", f"sparkinfer-lab-vllm:latest is not on {WORKER}", "run image.yml")
    # One node lacks it: the image is not called the same on every node.
    assert [entry["what"] for entry in of_area(missing, "image")] == ["the image is missing"]
    different = judged(worker__vllm__image__id="sha256:0123456789abcdef0123")
    assert different[0]["evidence"] == f"{HEAD} sha256:c83817061141, {WORKER} sha256:0123456789ab"
    assert different[1]["fix"] == "run serve.yml (or rollout.yml for a fleet) to restart on the inventory's image"
    lacks = "sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferDrillMoeForCausalLM; use an image whose vLLM lists it"
    assert only(judged(head__vllm__image__lacks=lacks)) == finding(
        "error",
        "image",
        HEAD,
        "the image lacks the served architecture",
        lacks,
        "set vllm_image_name to an image that holds it, then run image.yml and serve.yml (or rollout.yml)",
    )


def test_no_image_is_judged_when_the_inventory_names_none():
    assert [entry for entry in judged(head__vllm__image__name="", worker__vllm__image__name="") if entry["area"] == "image"] == []


def test_the_platform_rows_of_the_image_cite_their_source_and_say_their_fix():
    warned = only(judged(head__host__driver_version="580.126.09", head__vllm__image__compat_driver_version="590.48.01"))
    assert warned["evidence"].endswith(
        " (source: https://github.com/gyliu513/langX101/pull/409 (the entrypoint enables CUDA Forward Compatibility; bypassing it fails "
        "FlashInfer JIT with cudaErrorUnsupportedPtxVersion on a GB10); https://github.com/eugr/spark-vllm-docker/issues/266 "
        '("compatibility mode is UNAVAILABLE" on 580.159.03))'
    )
    assert warned["fix"].startswith("keep the image's entrypoint")
    # The row that finds the image's driver fine cites no source.
    [fine] = [entry for entry in judged(head__vllm__image__compat_driver_version="") if entry["what"] == "CUDA driver of the image"]
    assert (fine["evidence"], fine["fix"]) == ("the image carries no CUDA forward-compatibility driver newer than the host's 580.173.02", "")


def test_drift_is_a_warning_with_rollout_yml_the_fix():
    inputs = readings("healthy-pair-with-ray")[0]["vllm"]["inputs"]
    found = judged(head__vllm__inputs={"current": inputs["current"], "wanted": {**inputs["wanted"], "vllm_serve_max_model_len": 1024}})
    assert [(entry["severity"], entry["node"], entry["fix"]) for entry in of_area(found, "drift")] == [
        ("warning", HEAD, "run rollout.yml (or serve.yml) to launch what the inventory asks")
    ]


def test_a_node_alone_names_itself_and_port_1_when_its_reading_names_no_port():
    # The healthy reading predates fabric_port: nccl_network's default, port 1.
    found = alone(env=LOOPBACK_ENV, hcas=DOWN_PORT)
    assert [(entry["node"], entry["evidence"]) for entry in found] == [
        (
            HEAD,
            "a cluster of one node: its ranks use lo 127.0.0.1; ConnectX-7 port 1: rocep1s0f1 (enp1s0f1np1) DOWN (Disabled), "
            "roceP2p1s0f1 (enP2p1s0f1np1) DOWN (Disabled); no port is up",
        )
    ]


def test_docker_times_are_read_to_the_second_and_its_fraction_in_any_zone():
    # 2026-12-07 08:30:00 UTC is BOOTED less ten minutes.
    assert docker_time("2026-12-07T08:30:00Z") == BOOTED - 600
    assert docker_time("2026-12-07T17:30:00+09:00") == BOOTED - 600
    assert docker_time("2026-12-07T08:30:00.5Z") == BOOTED - 599.5
    assert docker_time("0001-01-01T00:00:00Z") is None
    assert docker_time(None) is None


def test_a_node_alone_with_its_fabric_port_elsewhere_says_the_port_has_no_hca():
    # nccl_network_fabric_port: 2 on a Spark whose sysfs lists port 1's halves only.
    assert [entry["evidence"] for entry in alone(env=LOOPBACK_ENV, hcas=DOWN_PORT, fabric_port=2)] == [
        "a cluster of one node: its ranks use lo 127.0.0.1; ConnectX-7 port 2 has no RoCE HCA in sysfs (2 HCA port(s) listed)"
    ]


def test_an_environment_file_without_the_address_or_the_interface_is_named_as_such():
    # The file written by hand, without VLLM_HOST_IP: the ranks bind to no fabric address.
    no_address = {name: value for name, value in HEALTHY_ENV.items() if name != "VLLM_HOST_IP"}
    assert only(judged(worker__fabric__env=no_address))["evidence"] == "/etc/sparkinfer/nccl.env says VLLM_HOST_IP=, eth0 holds 192.168.183.12"
    # Without NCCL_SOCKET_IFNAME: NCCL would pick an interface itself.
    no_interface = {name: value for name, value in HEALTHY_ENV.items() if name != "NCCL_SOCKET_IFNAME"}
    unnamed = only(judged(worker__fabric__env=no_interface))
    assert (unnamed["what"], unnamed["evidence"]) == (
        "no NCCL interface named",
        "/etc/sparkinfer/nccl.env sets no NCCL_SOCKET_IFNAME (interfaces: docker0, enP2p1s0f1np1, enP2p1s0f1np1-x, enp1s0f1np1, enp1s0f1np1-x, eth0)",
    )


def test_a_models_answer_that_is_no_json_object_lists_no_model():
    # The real answers, with /v1/models' JSON a bare list (not OpenAI's {"data": [...]}), as another server on the port may give.
    answers = api_answers("ok")
    answers[1]["json"] = ["tiny-qwen3-moe"]
    assert doctor_api_reading(answers)["models"] == []


def test_a_pinned_index_one_twin_lacks_is_named_with_that_twin_though_the_other_holds_it():
    # The drift of tonyd2wild's issue #38: roceP2p1s0f1's RoCE v2 IPv4 GID moved to 5, rocep1s0f1's stayed at 3. NCCL
    # uses the pinned 3 on both HCAs, and the one whose 3 is a hole fails alone.
    drifted = {**SPARK_TWIN, "roce_v2_ipv4_gids": [{"index": 5, "address": "192.168.101.10"}]}
    assert roce([SPARK_HCA, drifted], NCCL_IB_DISABLE="0", NCCL_IB_HCA="rocep1s0f1,roceP2p1s0f1", NCCL_IB_GID_INDEX="3") == [
        finding(
            "error",
            "fabric",
            WORKER,
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            "NCCL_IB_GID_INDEX=3, RoCE v2 IPv4 GIDs at 5 on roceP2p1s0f1",
            "unset nccl_network_ib_gid_index (NCCL picks each HCA's GID itself; indices drift) and run network.yml",
        )
    ]
    # Pinned where both hold it: fine.
    both = {**SPARK_TWIN, "roce_v2_ipv4_gids": [{"index": 3, "address": "192.168.101.10"}, {"index": 5, "address": "192.168.101.10"}]}
    fine = roce([SPARK_HCA, both], NCCL_IB_DISABLE="0", NCCL_IB_HCA="rocep1s0f1,roceP2p1s0f1", NCCL_IB_GID_INDEX="3")
    assert [(entry["severity"], entry["what"]) for entry in fine] == [("ok", "fabric")]


def test_without_nccl_ib_hca_a_pinned_index_is_judged_on_every_active_hca_and_a_down_one_is_left_out():
    down_twin = {**SPARK_TWIN, "state": "DOWN", "phys_state": "Disabled", "roce_v2_ipv4_gids": []}
    fine = roce([SPARK_HCA, down_twin], NCCL_IB_DISABLE="0", NCCL_IB_GID_INDEX="3")
    assert [(entry["severity"], entry["what"]) for entry in fine] == [("ok", "fabric")]
    lacking = roce([SPARK_HCA, {**down_twin, "state": "ACTIVE"}], NCCL_IB_DISABLE="0", NCCL_IB_GID_INDEX="3")
    assert [entry["evidence"] for entry in lacking] == ["NCCL_IB_GID_INDEX=3, RoCE v2 IPv4 GIDs at no index on roceP2p1s0f1"]


# ------------------------------------------------------------------ the RoCE rules on a real Spark's GID table
#
# show_gids on nvidia-spark-dgx-04, one of four DGX Sparks behind a switch (fixtures/fabric/SOURCES.md), transcribed
# row by row into the sysfs files show_gids reads (gids/N the GID, gid_attrs/types/N "IB/RoCE v1" for v1 and "RoCE v2"
# for v2, gid_attrs/ndevs/N the netdev), then read by fabric_facts' reader as the doctor's nccl_network reads a node.
FABRIC = FIXTURES.parents[2] / "module_utils" / "fixtures" / "fabric"
GB10 = FIXTURES.parents[2] / "module_utils" / "fixtures" / "gb10"
SHOW_GIDS = FABRIC / "show-gids-dgx-spark-4-node-switch-dgx-04.txt"
# (HCA, port, index, GID, VER, netdev). The listing's first row reads "ocep1s0f0": it lost its "r" in the paste (its GID
# and netdev are rocep1s0f0's, and show_gids lists a device's indices in order from 0).
DGX04_GIDS = [
    ("rocep1s0f0", 1, 0, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6531", "v1", "enp1s0f0np0"),
    ("rocep1s0f0", 1, 1, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6531", "v2", "enp1s0f0np0"),
    ("rocep1s0f0", 1, 2, "0000:0000:0000:0000:0000:ffff:c0a8:640d", "v1", "enp1s0f0np0"),
    ("rocep1s0f0", 1, 3, "0000:0000:0000:0000:0000:ffff:c0a8:640d", "v2", "enp1s0f0np0"),
    ("rocep1s0f1", 1, 0, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6532", "v1", "enp1s0f1np1"),
    ("rocep1s0f1", 1, 1, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6532", "v2", "enp1s0f1np1"),
    ("roceP2p1s0f0", 1, 0, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6535", "v1", "enP2p1s0f0np0"),
    ("roceP2p1s0f0", 1, 1, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6535", "v2", "enP2p1s0f0np0"),
    ("roceP2p1s0f0", 1, 2, "0000:0000:0000:0000:0000:ffff:c0a8:650d", "v1", "enP2p1s0f0np0"),
    ("roceP2p1s0f0", 1, 3, "0000:0000:0000:0000:0000:ffff:c0a8:650d", "v2", "enP2p1s0f0np0"),
    ("roceP2p1s0f1", 1, 0, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6536", "v1", "enP2p1s0f1np1"),
    ("roceP2p1s0f1", 1, 1, "fe80:0000:0000:0000:4ebb:47ff:fe2a:6536", "v2", "enP2p1s0f1np1"),
]
# show_gids prints the part of gid_attrs/types/N from its "v" on (`grep -o "[Vv].*"`).
GID_TYPES = {"v1": "IB/RoCE v1", "v2": "RoCE v2"}
# The listing has no port state; the same source's RDMA check reports every port PORT_ACTIVE.
ACTIVE = "4: ACTIVE"


def test_the_transcription_holds_every_row_of_the_real_listing():
    lines = SHOW_GIDS.read_text(encoding="utf-8").splitlines()
    assert lines[0].split() == ["DEV", "PORT", "INDEX", "GID", "IPv4", "VER", "DEV"]
    assert lines[-1] == "n_gids_found=12"
    rows = [line.split() for line in lines[2:-1]]
    # A row with an IPv4-mapped GID has the IPv4 column: it is derived from the GID, and left out of the transcription.
    listed = [(dev, int(port), int(index), gid, ver, netdev) for dev, port, index, gid, *_ipv4, ver, netdev in rows]
    assert [row[4] for row in rows if len(row) == 7] == ["192.168.100.13", "192.168.100.13", "192.168.101.13", "192.168.101.13"]
    assert listed[0][0] == "ocep1s0f0"
    assert [("rocep1s0f0", *row[1:]) if row[0] == "ocep1s0f0" else row for row in listed] == DGX04_GIDS


def dgx04_hcas(root: Path, rows: tuple[tuple[str, int, int, str, str, str], ...] | None = None) -> list[dict]:
    """fabric_facts' HCAs of the transcribed table (or of these rows), as the doctor's reading holds them."""
    for hca, port, index, gid, ver, netdev in DGX04_GIDS if rows is None else rows:
        base = root / "class" / "infiniband" / hca / "ports" / str(port)
        for relative, text in ((f"gids/{index}", gid), (f"gid_attrs/types/{index}", GID_TYPES[ver]), (f"gid_attrs/ndevs/{index}", netdev), ("state", ACTIVE)):
            (base / relative).parent.mkdir(parents=True, exist_ok=True)
            (base / relative).write_text(f"{text}\n", encoding="ascii")
    (root / "class" / "net").mkdir(parents=True)
    return fabric_facts(SysfsReader(str(root)).read())["hcas"]


def test_the_reader_finds_the_roce_v2_ipv4_gids_of_the_real_table(tmp_path):
    hcas = {hca["name"]: hca for hca in dgx04_hcas(tmp_path)}
    # Read off the listing: the v2 rows whose GID maps an IPv4 address.
    assert {name: hca["roce_v2_ipv4_gids"] for name, hca in hcas.items()} == {
        "rocep1s0f0": [{"index": 3, "address": "192.168.100.13"}],
        "rocep1s0f1": [],
        "roceP2p1s0f0": [{"index": 3, "address": "192.168.101.13"}],
        "roceP2p1s0f1": [],
    }
    assert {name: (hca["netdev"], hca["state"]) for name, hca in hcas.items()} == {
        "rocep1s0f0": ("enp1s0f0np0", "ACTIVE"),
        "rocep1s0f1": ("enp1s0f1np1", "ACTIVE"),
        "roceP2p1s0f0": ("enP2p1s0f0np0", "ACTIVE"),
        "roceP2p1s0f1": ("enP2p1s0f1np1", "ACTIVE"),
    }


ADDRESSED_TWINS = "rocep1s0f0,roceP2p1s0f0"
FIX_GID = "unset nccl_network_ib_gid_index (NCCL picks each HCA's GID itself; indices drift) and run network.yml"


def test_index_3_of_the_real_table_is_the_roce_v2_ipv4_gid_of_both_addressed_twins(tmp_path):
    found = roce(dgx04_hcas(tmp_path), NCCL_IB_DISABLE="0", NCCL_IB_HCA=ADDRESSED_TWINS, NCCL_IB_GID_INDEX="3")
    assert [(entry["severity"], entry["what"]) for entry in found] == [("ok", "fabric")]


@pytest.mark.parametrize(
    "index",
    [
        # 2: the IPv4 address's RoCE v1 entry.
        "2",
        # 1: RoCE v2, but the fe80 link-local (IPv6) GID.
        "1",
        # 0: the link-local GID's RoCE v1 entry.
        "0",
    ],
)
def test_an_index_of_the_real_table_that_is_roce_v1_or_ipv6_is_an_error_naming_where_the_gids_are(tmp_path, index):
    found = roce(dgx04_hcas(tmp_path), NCCL_IB_DISABLE="0", NCCL_IB_HCA=ADDRESSED_TWINS, NCCL_IB_GID_INDEX=index)
    assert found == [
        finding(
            "error",
            "fabric",
            WORKER,
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            f"NCCL_IB_GID_INDEX={index}, RoCE v2 IPv4 GIDs at 3 on rocep1s0f0; 3 on roceP2p1s0f0",
            FIX_GID,
        )
    ]


def test_index_3_of_the_real_table_is_an_error_on_an_hca_whose_netdev_has_no_address(tmp_path):
    # rocep1s0f1 holds link-local GIDs only: NCCL's pinned index 3 is a hole there, though rocep1s0f0 holds it.
    found = roce(dgx04_hcas(tmp_path), NCCL_IB_DISABLE="0", NCCL_IB_HCA="rocep1s0f0,rocep1s0f1", NCCL_IB_GID_INDEX="3")
    assert found == [
        finding(
            "error",
            "fabric",
            WORKER,
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            "NCCL_IB_GID_INDEX=3, RoCE v2 IPv4 GIDs at no index on rocep1s0f1",
            FIX_GID,
        )
    ]


def test_an_hca_with_two_addresses_but_not_the_pinned_index_is_named_with_both_of_its_indices(tmp_path):
    # The real table with a second address on enp1s0f0np0 (192.168.100.14), which the listing does not have: the kernel
    # adds GIDs for each IPv4 address of the netdev (roce_gid_mgmt.c: enum_netdev_ipv4_ips, inetaddr_event), a RoCE v1
    # and a RoCE v2 one as the listing shows for the first address (2 and 3); here at the next indices, 4 and 5.
    second = "0000:0000:0000:0000:0000:ffff:c0a8:640e"
    rows = (*DGX04_GIDS, ("rocep1s0f0", 1, 4, second, "v1", "enp1s0f0np0"), ("rocep1s0f0", 1, 5, second, "v2", "enp1s0f0np0"))
    hcas = dgx04_hcas(tmp_path, rows)
    assert next(hca for hca in hcas if hca["name"] == "rocep1s0f0")["roce_v2_ipv4_gids"] == [
        {"index": 3, "address": "192.168.100.13"},
        {"index": 5, "address": "192.168.100.14"},
    ]
    found = roce(hcas, NCCL_IB_DISABLE="0", NCCL_IB_HCA=ADDRESSED_TWINS, NCCL_IB_GID_INDEX="2")
    assert found == [
        finding(
            "error",
            "fabric",
            WORKER,
            "the pinned GID index is no RoCE v2 IPv4 GID now",
            "NCCL_IB_GID_INDEX=2, RoCE v2 IPv4 GIDs at 3, 5 on rocep1s0f0; 3 on roceP2p1s0f0",
            FIX_GID,
        )
    ]
    # Pinned at 5, the second address's: rocep1s0f0 holds it, roceP2p1s0f0 does not.
    found = roce(hcas, NCCL_IB_DISABLE="0", NCCL_IB_HCA=ADDRESSED_TWINS, NCCL_IB_GID_INDEX="5")
    assert [entry["evidence"] for entry in found] == ["NCCL_IB_GID_INDEX=5, RoCE v2 IPv4 GIDs at 3 on roceP2p1s0f0"]


def test_the_doctor_refuses_a_real_590_driver_with_the_fields_report_and_its_source():
    # Driver 590.48.01's plain nvidia-smi (an RTX A400's: no 590 output of a Spark is public; fixtures/gb10/SOURCES.md).
    banner = parse_smi_banner((GB10 / "nvidia-smi-590.48.01-plain-rtx-a400-x86_64.txt").read_text(encoding="utf-8"))
    refused = only(judged(worker__host__driver_version=banner.driver_version))
    assert (refused["severity"], refused["area"], refused["node"], refused["what"]) == ("error", "host", WORKER, "driver branch not accepted")
    assert refused["evidence"] == (
        "NVIDIA driver 590.48.01: its branch is not in gb10_host_supported_driver_branches (580). The 590 branch: its full CUDA graphs "
        f"deadlock or crash in capture on GB10 unified memory; piecewise CUDA graphs run (source: {DEEPOPS})"
    )
