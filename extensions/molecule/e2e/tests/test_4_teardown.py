"""Teardown of the chain, last of the scenario's test files: vLLM, Ray and the transfer key go; the image and the model stay."""

from __future__ import annotations

from chain_lab import PLAYBOOKS, node, run_playbook


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
