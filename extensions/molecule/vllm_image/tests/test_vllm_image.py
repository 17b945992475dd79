"""Verify two lab nodes after the vllm_image role: one image and one model on both, sent over the fabric."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from role_runs import CONVERGE, run_playbook, run_role

SCENARIO = "vllm_image"
IMAGE = "sparkinfer-lab-vllm:latest"
MODEL = "/opt/sparkinfer/models/tiny-qwen3-moe"
SOURCE_ADDRESS = "192.168.178.11"
RECEIVER_ADDRESS = "192.168.178.12"
FORCED_COMMAND = "/usr/local/bin/sparkinfer-transfer"
# The source node's SSH command for transfers, as the role runs it (roles/vllm_image/vars/main.yml), never prompting.
TRANSFER_SSH = (
    "ssh -i /root/.ssh/sparkinfer_transfer_ed25519 -o UserKnownHostsFile=/root/.ssh/sparkinfer_transfer_known_hosts "
    "-o StrictHostKeyChecking=yes -o BatchMode=yes"
)


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
    assert f'restrict,from="{SOURCE_ADDRESS}",command="{FORCED_COMMAND} {MODEL}"' in keys
    assert "sparkinfer-transfer@vllm-spark-1" in keys
    known = node("vllm-spark-1").file("/root/.ssh/sparkinfer_transfer_known_hosts").content_string
    host_key = node("vllm-spark-2").file("/etc/ssh/ssh_host_ed25519_key.pub").content_string.split()[1]
    assert host_key in known


def test_the_transfer_key_runs_only_docker_load_or_rsync_into_the_model_directory():
    source, receiver = node("vllm-spark-1"), node("vllm-spark-2")
    assert receiver.file(FORCED_COMMAND).mode == 0o755
    # Another command, or the one the key is for with another after it: refused by the forced command, never run.
    for command in ("touch /tmp/sparkinfer-injected", "docker load; touch /tmp/sparkinfer-injected"):
        refused = source.run(f"{TRANSFER_SSH} sparkops@{RECEIVER_ADDRESS} {shlex.quote(command)}")
        assert refused.rc == 1, refused
        assert f"sparkinfer-transfer: refused '{command}'" in refused.stderr, refused.stderr
    # rsync reading from the receiving node, or writing outside the model directory.
    options = "options other than -r, -t, --checksum, --dry-run, --itemize-changes and --delete"
    pulled = source.run(f"rsync -rt -e {shlex.quote(TRANSFER_SSH)} sparkops@{RECEIVER_ADDRESS}:/etc/hostname /tmp/sparkinfer-pulled")
    assert pulled.rc != 0, pulled
    assert options in pulled.stderr, pulled.stderr
    # -a would make links and set owners, permissions and device files on the receiving node.
    archived = source.run(f"rsync -a -e {shlex.quote(TRANSFER_SSH)} {MODEL}/ sparkops@{RECEIVER_ADDRESS}:{MODEL}/")
    assert archived.rc != 0, archived
    assert options in archived.stderr, archived.stderr
    pushed = source.run(f"rsync -rt -e {shlex.quote(TRANSFER_SSH)} {MODEL}/config.json sparkops@{RECEIVER_ADDRESS}:/tmp/sparkinfer-elsewhere/")
    assert pushed.rc != 0, pushed
    assert f"a destination other than {MODEL}/" in pushed.stderr, pushed.stderr
    assert not receiver.file("/tmp/sparkinfer-injected").exists
    assert not receiver.file("/tmp/sparkinfer-elsewhere").exists
    assert not source.file("/tmp/sparkinfer-pulled").exists


# What needs the nodes: the image, its vLLM and build, the accounts. The argument specification's refusals are drill 7's
# (e2e), and the rules of the variables alone one table (module_utils/_vllm_image_settings.py, each rule unit-tested): a
# digest that is no digest here, and two transfer values that would reach a shell below, show the preflight refuses on it.
@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"vllm_image_model_path": "/opt/sparkinfer/models/tiny-unsupported"},
            "sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM",
        ),
        (
            {"vllm_image_architecture": "aarch64"},
            "sparkinfer-lab-vllm:latest is built for amd64 and this host is arm64 (aarch64): save or pull its arm64 variant",
        ),
        ({"vllm_image_cuda_capability": "12.1"}, "sparkinfer-lab-vllm:latest has a CPU build of torch (2.13.0+cpu, no CUDA), whose vLLM cannot use the GPU"),
        ({"vllm_image_name": "sparkinfer-lab-vllm:missing"}, "sparkinfer-lab-vllm:missing is not on vllm-spark-1"),
        ({"vllm_image_transfer_user": "root"}, "vllm_image_transfer_user is 'root', which is root (uid 0) on vllm-spark-2."),
        ({"vllm_image_digest": "sha256:" + "4" * 64}, f"has no registry digest, so it is not the build pinned as sha256:{'4' * 64}"),
        # The version gate on the lab image's vLLM 0.32.0.
        ({"vllm_image_min_vllm_version": "99.0"}, "sparkinfer-lab-vllm:latest has vLLM 0.32.0, older than 99.0, the first release this deployment accepts"),
        ({"vllm_image_digest": "4413e0f2"}, "vllm_image_digest is 4413e0f2: give a registry digest, sha256: and 64 hexadecimal digits"),
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


def test_a_node_whose_model_changed_gets_the_source_copy_and_its_own_files_are_named_not_deleted():
    # Converge already sent the image to a node without it; resending 2.5 GB again adds nothing.
    source, receiver = node("vllm-spark-1"), node("vllm-spark-2")
    receiver.check_output(f"rm {MODEL}/tokenizer.json && echo mine > {MODEL}/extra.safetensors")
    # A link out of the model directory, as a Hugging Face snapshot's into its blobs: it arrives as the file.
    source.check_output(f"echo blob > /opt/sparkinfer/linked-blob && ln -sfn /opt/sparkinfer/linked-blob {MODEL}/linked.json")
    try:
        code, output = run_role(SCENARIO, {})
        assert code == 2, output[-2000:]
        assert f"{MODEL} on vllm-spark-2 holds files that vllm-spark-1's does not: extra.safetensors" in output, output[-2000:]
        assert "set vllm_image_model_delete_extra to true" in output
        assert receiver.file(f"{MODEL}/tokenizer.json").exists
        assert receiver.file(f"{MODEL}/extra.safetensors").content_string == "mine\n"

        code, output = run_role(SCENARIO, {"vllm_image_model_delete_extra": True, "vllm_image_model_fingerprint": "checksum"})
        assert code == 0, output[-2000:]
        assert re.search(r"vllm-spark-2 *: ok=\d+ +changed=1 ", output), output[-2000:]
        assert not receiver.file(f"{MODEL}/extra.safetensors").exists
        linked = receiver.file(f"{MODEL}/linked.json")
        assert (linked.is_file, linked.is_symlink, linked.content_string, linked.user) == (True, False, "blob\n", "sparkops")
        # The gate reports the build it passed: the lab's image is built on the node, so it has no registry digest.
        assert "sparkinfer-lab-vllm:latest is image sha256:" in output, output[-2000:]
        assert "without a registry digest (built or loaded here): its image ID names it" in output, output[-2000:]
    finally:
        receiver.run(f"rm -f {MODEL}/extra.safetensors {MODEL}/linked.json")
        source.run(f"rm -f {MODEL}/linked.json /opt/sparkinfer/linked-blob")


def test_a_model_in_an_existing_directory_leaves_that_directory_s_owner_alone():
    parent = "/srv/sparkinfer-parent"
    model = f"{parent}/tiny"
    source, receiver = node("vllm-spark-1"), node("vllm-spark-2")
    for host in (source, receiver):
        host.check_output(f"rm -rf {parent} && install -d -o root -g root -m 0755 {parent}")
    source.check_output(f"cp -a {MODEL} {model}")
    try:
        code, output = run_role(SCENARIO, {"vllm_image_model_path": model})
        assert code == 0, output[-2000:]
        assert (receiver.file(parent).user, receiver.file(parent).mode) == ("root", 0o755)
        assert receiver.file(model).user == "sparkops"
        assert receiver.file(f"{model}/config.json").exists
    finally:
        for host in (source, receiver):
            host.run(f"rm -rf {parent}")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"vllm_image_transfer_address": "192.0.2.12;touch /tmp/sparkinfer-injected;echo"}, "which is not an IPv4 address"),
        ({"vllm_image_transfer_key": "/root/key;touch /tmp/sparkinfer-injected"}, "vllm_image_transfer_key is"),
    ],
)
def test_transfer_values_that_would_reach_a_shell_are_refused_before_use(override, message):
    code, output = run_role(SCENARIO, override)
    assert code == 2, output[-2000:]
    assert message in output, output[-2000:]
    for name in ("vllm-spark-1", "vllm-spark-2"):
        assert not node(name).file("/tmp/sparkinfer-injected").exists


# What a first run finds on a new pair, set aside on the converged one: the source's transfer key and the host keys it
# knows; the receiving node's acceptance of the key, its forced command and the model. The image is still to pull.
FRESH_SOURCE = ("/root/.ssh/sparkinfer_transfer_ed25519", "/root/.ssh/sparkinfer_transfer_ed25519.pub", "/root/.ssh/sparkinfer_transfer_known_hosts")
FRESH_RECEIVER = ("/home/sparkops/.ssh/authorized_keys", FORCED_COMMAND, MODEL)
TO_PULL = "sparkinfer-lab-vllm:to-be-pulled"


def test_check_mode_on_a_new_pair_with_its_image_still_to_pull_and_no_transfer_key_passes_and_changes_nothing():
    source, receiver = node("vllm-spark-1"), node("vllm-spark-2")
    source.check_output(" && ".join(f"mv {path} {path}.kept" for path in FRESH_SOURCE))
    receiver.check_output(" && ".join(f"mv {path} {path}.kept" for path in FRESH_RECEIVER))
    try:
        code, output = run_playbook(CONVERGE, {"vllm_image_source": "pull", "vllm_image_name": TO_PULL}, scenario=SCENARIO, options=("--check",))
        absent = [path for host, paths in ((source, FRESH_SOURCE), (receiver, FRESH_RECEIVER)) for path in paths if not host.file(path).exists]
        image_absent = [host.run(f"docker image inspect {TO_PULL}").rc for host in (source, receiver)]
    finally:
        source.check_output(" && ".join(f"mv {path}.kept {path}" for path in FRESH_SOURCE))
        receiver.check_output(" && ".join(f"mv {path}.kept {path}" for path in FRESH_RECEIVER))
    assert code == 0, output[-3000:]
    # It says what the real run would do: make the key, have the receiving node accept it, make the model's directory;
    # the model's dry run needs the key, so it waits for the real run.
    for task, host in (
        ("Trust | Create the transfer key on the source node", "vllm-spark-1"),
        ("Trust | Install the transfer key's forced command on each receiving node", "vllm-spark-2"),
        ("Model | Create the model directory where it is missing, owned by the transfer user", "vllm-spark-2"),
    ):
        assert re.search(rf"TASK \[[^]]*{re.escape(task)}\] \*+(?:(?!TASK \[).)*? changed: \[{host}\]", output), (task, output[-3000:])
    assert re.search(r"Model \| Copy the model from the source node [^]]*\] \*+(?:(?!TASK \[).)*? skipping: \[vllm-spark-2", output), output[-3000:]
    # And nothing of it happened.
    assert (absent, image_absent) == ([*FRESH_SOURCE, *FRESH_RECEIVER], [1, 1])


# An image with no files at all (docker import of an empty tar): it can travel, but it holds no vLLM to probe.
EMPTY_IMAGE = "tar -cf /tmp/sparkinfer-empty.tar --files-from /dev/null && docker import /tmp/sparkinfer-empty.tar {name}"
ARCHIVED = "sparkinfer-no-vllm:archive"
ARCHIVE = "/tmp/sparkinfer-no-vllm.tar"
# Docker's own registry (Debian's docker-registry, in the node image, with the lab's config: anonymous, on loopback) on
# the source node: Docker pulls from localhost without TLS. It answers a moment after systemd started it.
PULLED = "localhost:5000/sparkinfer-no-vllm:pull"
START_REGISTRY = "systemctl start docker-registry && timeout 30 bash -c 'until echo > /dev/tcp/127.0.0.1/5000; do sleep 0.2; done' 2>/dev/null"


def image_in_an_archive(source) -> tuple[str, dict]:
    """The empty image saved as `docker save` would ship it, and gone from the engine: what vllm_image_source load reads."""
    source.check_output(f"{EMPTY_IMAGE.format(name=ARCHIVED)} && docker save -o {ARCHIVE} {ARCHIVED} && docker rmi {ARCHIVED}")
    return ARCHIVED, {"vllm_image_name": ARCHIVED, "vllm_image_source": "load", "vllm_image_tarball": ARCHIVE}


def image_in_a_registry(source) -> tuple[str, dict]:
    """The empty image pushed to a registry, and gone from the engine: what vllm_image_source pull fetches."""
    source.check_output(f"{START_REGISTRY} && {EMPTY_IMAGE.format(name=PULLED)} && docker push {PULLED} && docker rmi {PULLED}")
    return PULLED, {"vllm_image_name": PULLED, "vllm_image_source": "pull"}


@pytest.mark.parametrize("origin", [image_in_an_archive, image_in_a_registry], ids=["load", "pull"])
def test_an_image_fetched_from_its_source_is_probed_and_one_without_vllm_is_refused_before_it_travels(origin):
    source, receiver = node("vllm-spark-1"), node("vllm-spark-2")
    name, override = origin(source)
    try:
        code, output = run_role(SCENARIO, override)
        assert code == 2, output[-2000:]
        # The load or pull is the one change; the receiving node stops with the reason, before any trust or transfer.
        assert re.search(r"vllm-spark-1 : ok=\d+ changed=1 ", output), output[-3000:]
        assert f"cannot probe {name} (rc=127): the image probe printed no result (does the image have python3?)" in output, output[-2000:]
        assert "vllm-spark-1 failed above, so vllm-spark-2 gets no image and no model from it" in output, output[-2000:]
        assert re.search(r"vllm-spark-2 : ok=\d+ changed=0 ", output), output[-3000:]
        assert source.run(f"docker image inspect {name}").rc == 0
        assert receiver.run(f"docker image inspect {name}").rc == 1
    finally:
        source.run(f"docker rmi {name}; rm -f {ARCHIVE} /tmp/sparkinfer-empty.tar; systemctl stop docker-registry; rm -rf /var/lib/docker-registry/docker")
