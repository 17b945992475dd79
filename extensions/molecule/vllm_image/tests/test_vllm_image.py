"""Verify two lab nodes after the vllm_image role: one image and one model on both, sent over the fabric."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from role_runs import run_role

SCENARIO = "vllm_image"
IMAGE = "sparkinfer-lab-vllm:latest"
MODEL = "/opt/sparkinfer/models/tiny-qwen3-moe"
SOURCE_ADDRESS = "192.168.178.11"


def node(name: str) -> testinfra.host.Host:
    return testinfra.get_host(f"ansible://{name}?ansible_inventory={os.environ['MOLECULE_INVENTORY_FILE']}")


def image_id(host) -> str:
    return host.check_output(f"docker image inspect --format '{{{{.Id}}}}' {IMAGE}")


def test_both_nodes_hold_the_lab_machines_image():
    built = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", IMAGE], capture_output=True, text=True, check=True).stdout.strip()
    assert image_id(node("vllm-spark-1")) == built
    assert image_id(node("vllm-spark-2")) == built


def test_both_nodes_hold_the_same_model_files():
    listing = f"cd {MODEL} && find . -type f -exec sha256sum {{}} + | sort -k 2"
    source = node("vllm-spark-1").check_output(listing)
    assert "./config.json" in source
    assert "./model.safetensors" in source
    assert node("vllm-spark-2").check_output(listing) == source
    assert node("vllm-spark-2").file(MODEL).user == "sparkops"


def test_the_receiving_node_accepts_the_transfer_key_from_the_source_fabric_address_only():
    keys = node("vllm-spark-2").file("/home/sparkops/.ssh/authorized_keys").content_string
    assert f'from="{SOURCE_ADDRESS}"' in keys
    assert "sparkinfer-transfer@vllm-spark-1" in keys
    known = node("vllm-spark-1").file("/root/.ssh/sparkinfer_transfer_known_hosts").content_string
    host_key = node("vllm-spark-2").file("/etc/ssh/ssh_host_ed25519_key.pub").content_string.split()[1]
    assert host_key in known


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"vllm_image_model_path": "/opt/sparkinfer/models/tiny-unsupported"},
            "sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM",
        ),
        ({"vllm_image_source": "registry"}, "vllm_image_source must be one of: node, pull, load"),
        ({"vllm_image_name": "sparkinfer-lab-vllm:missing"}, "sparkinfer-lab-vllm:missing is not on vllm-spark-1"),
    ],
)
def test_role_refuses_an_image_that_cannot_serve_the_model(override, message):
    source = node("vllm-spark-1")
    # A model whose config names a class vLLM does not have: the architecture gate's case.
    source.check_output(
        f"rm -rf /opt/sparkinfer/models/tiny-unsupported && cp -a {MODEL} /opt/sparkinfer/models/tiny-unsupported && "
        "sed -i 's/Qwen3MoeForCausalLM/SparkinferTinyMoeForCausalLM/' /opt/sparkinfer/models/tiny-unsupported/config.json"
    )
    code, output = run_role(SCENARIO, override)
    assert code == 2, output[-2000:]
    assert message in output, output[-2000:]
    assert not node("vllm-spark-2").file("/opt/sparkinfer/models/tiny-unsupported").exists


def test_a_node_whose_model_changed_gets_the_source_copy_again():
    # Converge already sent the image to a node without it; resending 2.5 GB again adds nothing.
    receiver = node("vllm-spark-2")
    receiver.check_output(f"rm {MODEL}/tokenizer.json && echo stale > {MODEL}/stale.txt")
    code, output = run_role(SCENARIO, {})
    assert code == 0, output[-2000:]
    assert re.search(r"vllm-spark-2 *: ok=\d+ +changed=1 ", output), output[-2000:]
    assert receiver.file(f"{MODEL}/tokenizer.json").exists
    assert not receiver.file(f"{MODEL}/stale.txt").exists
