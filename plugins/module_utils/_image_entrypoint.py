# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The entrypoint a container of the collection runs its program (vllm, ray) with, given the image's own entrypoint.

Some images' entrypoints prepare the container and then exec their arguments. Replacing such an entrypoint with the
program loses what it prepares, so the program runs through it instead. No I/O here.
"""

from __future__ import annotations

from collections.abc import Sequence

# Entrypoints that prepare the container and then exec their arguments, with what replacing them would lose.
WRAPPER_ENTRYPOINTS = {
    "/opt/nvidia/nvidia_entrypoint.sh": (
        "NGC images (nvcr.io/nvidia/vllm and the images built on them) switch CUDA forward compatibility on in it: "
        "bypassed, FlashInfer's JIT fails with cudaErrorUnsupportedPtxVersion on a GB10 (gyliu513/langX101#409)"
    ),
}


def container_entrypoint(program: str, image_entrypoint: Sequence[str] | None) -> list[str]:
    """The entrypoint that runs program in a container of an image whose entrypoint is image_entrypoint: the image's
    wrapper followed by the program when it has one, else the program alone (its arguments are the container's command)."""
    wrapper = image_entrypoint[0] if image_entrypoint else None
    return [wrapper, program] if wrapper in WRAPPER_ENTRYPOINTS else [program]
