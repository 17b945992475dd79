"""Seconds to ready of a first and a second launch of vLLM with the persistent cache that vllm_serve mounts.

Runs the lab vLLM image (vLLM's CPU build, `make lab-vllm-image`) with the tiny generated MoE (lab/seed-head.sh
generates it once per machine) N times in a row (default 2), each a new container with the same model and
flags and the same empty-at-first host directory as vLLM's cache, mounted where vllm_serve mounts it (the
sparkinfer.cluster.vllm_cache_mounts filter). Prints per launch the seconds from `docker run` to vLLM's
"Application startup complete", and what vLLM said of torch.compile: "compiled" (it logged `saved AOT
compiled function to ...`), "loaded from the cache" (`Directly load AOT compilation from path ...`), or
"found in the cache, not loadable" (`Compiling model again due to a load failure from ...`, which vLLM
0.32.0's CPU build says of its own artifact: docs/lab.md).

With --without-cache, the same launches mount no cache (vllm_serve_cache_enabled: false), for comparison.

Usage: python bench/vllm_compile_cache.py [LAUNCHES] [--without-cache]
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / ".cache" / "collections"))
from ansible_collections.sparkinfer.cluster.plugins.filter.caches import vllm_cache_mounts  # noqa: E402

IMAGE = "sparkinfer-lab-vllm:latest"
MODEL_IN_CONTAINER = "/opt/sparkinfer/models/tiny-qwen3-moe"
COMPILED = "saved AOT compiled function to "
LOADED = "Directly load AOT compilation from path "
NOT_LOADABLE = "Compiling model again due to a load failure from "


def tiny_model() -> str:
    cache = os.environ.get("SPARKINFER_CACHE", "/var/cache/sparkinfer")
    found = sorted(glob.glob(f"{cache}/tiny-qwen3-moe-*/config.json"), key=os.path.getmtime)
    if not found:
        sys.exit(f"no tiny model under {cache}: run lab/seed-head.sh once (make site or make molecule do)")
    return str(Path(found[-1]).parent)


def launch(model: str, cache_dir: str | None, number: int) -> tuple[float, str]:
    mounts = vllm_cache_mounts({"vllm": cache_dir} if cache_dir else {}, variable="the benchmark's cache")
    name = f"sparkinfer-bench-compile-cache-{os.getpid()}-{number}"
    # A host-sized /dev/shm, as the lab nodes have: vLLM's processes share memory there (Docker's 64 MiB is too little).
    argv = ["docker", "run", "-d", "--name", name, "--network", "none", "--shm-size", "2g", "-v", f"{model}:{MODEL_IN_CONTAINER}:ro"]
    for volume in mounts["volumes"]:
        argv += ["-v", volume]
    for variable, value in {**mounts["env"], "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1"}.items():
        argv += ["-e", f"{variable}={value}"]
    argv += [IMAGE, MODEL_IN_CONTAINER, "--max-model-len", "512", "--port", "8000"]
    start = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    try:
        while True:
            log = subprocess.run(["docker", "logs", name], capture_output=True, text=True, timeout=60, check=False)
            text = log.stdout + log.stderr
            if "Application startup complete" in text:
                seconds = time.monotonic() - start
                break
            state = subprocess.run(["docker", "inspect", "-f", "{{.State.Running}}", name], capture_output=True, text=True, timeout=60, check=False)
            if state.stdout.strip() != "true":
                errors = "\n".join(line for line in text.splitlines() if "Error" in line or "error" in line)
                sys.exit(f"launch {number} ended before it was ready:\n{errors[-3000:]}")
            if time.monotonic() - start > 900:
                sys.exit(f"launch {number} not ready after 900 s")
            time.sleep(1)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60, check=False)
    if LOADED in text:
        said = "loaded from the cache"
    elif NOT_LOADABLE in text:
        said = "found in the cache, not loadable: " + text.split(NOT_LOADABLE, 1)[1].split("reason: ", 1)[-1].splitlines()[0]
    elif COMPILED in text:
        said = "compiled"
    else:
        said = "said nothing of torch.compile"
    return seconds, said


def main() -> int:
    arguments = [argument for argument in sys.argv[1:] if argument != "--without-cache"]
    launches = int(arguments[0]) if arguments else 2
    with_cache = "--without-cache" not in sys.argv[1:]
    model = tiny_model()
    with tempfile.TemporaryDirectory(prefix="sparkinfer-bench-cache.") as cache_dir:
        print(f"{IMAGE}, {model}, " + (f"cache {cache_dir} (empty at first)" if with_cache else "no cache mounted"))
        print(f"{'launch':>6}  {'seconds to ready':>16}  torch.compile")
        for number in range(1, launches + 1):
            seconds, said = launch(model, cache_dir if with_cache else None, number)
            print(f"{number:>6}  {seconds:>16.1f}  {said}")
        # The container wrote the cache as root: leave nothing behind for TemporaryDirectory to trip on.
        subprocess.run(["chmod", "-R", "u+rwX", cache_dir], check=False, timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
