"""Teardown of the chain, last of the scenario's test files: the worker's reboot under the server, which the doctor
names; then vLLM, Ray and the transfer key go; the image and the model stay."""

from __future__ import annotations

import re
import shlex

from chain_lab import PLAYBOOKS, api_key, host_var, node, pair, record, run_playbook, timed
from lab_reboot import reboot

# What a user of the head could run once vLLM is down: a server on the API's port that keeps every Authorization header.
EAVESDROPPER = """
import http.server
class Heard(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open("/tmp/heard", "a") as heard:
            heard.write(f"{self.path} {self.headers.get('Authorization')}\\n")
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
http.server.HTTPServer(("ADDRESS", 8000), Heard).serve_forever()
"""


def test_after_the_worker_rebooted_the_doctor_says_why_and_sends_the_key_to_no_other_listener():
    # The worker reboots under the pair's server: after the boot its fabric holds its addresses again, and its vLLM rank
    # stays down, as designed (restart policy no). The head's rank is then stopped, and a listener of the head's user
    # takes the API's port.
    head, worker = node(pair().head), node(pair().worker)
    reboot(pair().worker)
    twins = zip(host_var(pair().worker, "nccl_network_fabric_interfaces"), host_var(pair().worker, "nccl_network_fabric_addresses"))
    for twin, address in twins:
        assert address in worker.check_output(f"ip -4 -br addr show {twin}").split(), f"{twin} came back without {address}"
    assert worker.check_output("docker inspect --format '{{.State.Status}} {{.RestartCount}}' sparkinfer-vllm") == "exited 0"
    head.check_output("docker stop sparkinfer-vllm")
    script = EAVESDROPPER.replace("ADDRESS", pair().head_ip)
    head.check_output(f"rm -f /tmp/heard; setsid nohup python3 -c {shlex.quote(script)} >/dev/null 2>&1 &")
    try:
        head.check_output(
            "for i in $(seq 50); do python3 -c 'import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)' "
            f"http://{pair().head_ip}:8000/ready && exit 0; sleep 0.2; done; exit 1"
        )
        run = timed("doctor.yml")
        heard = head.run("cat /tmp/heard").stdout
    finally:
        head.run("pkill -f Heard")
    assert run.code == 2, run.output[-3000:]
    said = " ".join(run.output.split())
    # The worker's rank: the reboot, with when, and why Docker did not start it again.
    rebooted = (
        rf"ERROR vllm {pair().worker} the node rebooted under the vLLM server evidence: {pair().worker} booted at [0-9: -]+ UTC, "
        r"after sparkinfer-vllm started at [0-9: -]+ UTC; it is exited \(exit code [0-9]+\) fix: Docker does not start a vLLM rank again, by design"
    )
    assert re.search(rebooted, said), run.output[-4000:]
    assert f"{pair().worker}: the node rebooted under the vLLM server (Docker does not start a vLLM rank again" in said
    # The head's rank, stopped by hand: no reboot.
    assert f"ERROR vllm {pair().head} the vLLM rank is exited" in said, run.output[-4000:]
    assert "not asked: sparkinfer-vllm is not running, and the API key goes to no other listener on port 8000" in said
    assert heard.splitlines() == ["/ready None"], heard
    assert api_key() not in heard
    record("doctor.yml after a reboot of the worker, a listener on the API's port", run.seconds, 90, "doctor: node rebooted, key not sent")


def test_teardown_removes_vllm_and_keeps_image_and_model():
    code, output = run_playbook(PLAYBOOKS / "teardown.yml", {})
    assert code == 0, output[-3000:]
    for name in ("e2e-spark-1", "e2e-spark-2"):
        host = node(name)
        assert host.check_output("docker ps -a --format '{{.Names}}'") == ""
        assert host.run("docker image inspect sparkinfer-lab-vllm:latest").rc == 0
        assert host.file("/opt/sparkinfer/models/tiny-qwen3-moe/config.json").exists
        # The rendezvous chain, Ray's chains (the drills started Ray, with the admin box as a metrics scraper) and their
        # boot units are gone, and so is the image transfer key, on both ends.
        for chain, unit in (
            ("SPARKINFER-VLLM", "sparkinfer-vllm-firewall"),
            ("SPARKINFER-RAY", "sparkinfer-ray-firewall"),
            ("SPARKINFER-RAYMETRICS", "sparkinfer-raymetrics-firewall"),
        ):
            assert host.run(f"iptables -S {chain}").rc != 0
            assert not host.file(f"/etc/systemd/system/{unit}.service").exists
        assert host.run("grep -rl sparkinfer-transfer@ /root/.ssh /home").stdout == ""
        assert not host.file("/usr/local/bin/sparkinfer-transfer").exists
    assert not node("e2e-spark-1").file("/root/.ssh/sparkinfer_transfer_ed25519").exists
