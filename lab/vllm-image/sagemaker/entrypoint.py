"""The lab's image configured by its environment: the AWS vLLM SageMaker container's entrypoint convention on the lab's vLLM.

aws/deep-learning-containers vllm/build_artifacts/sagemaker_entrypoint.sh (commit cb035a10da53) starts vLLM's OpenAI API
server with `--port 8080`, then one flag per SM_VLLM_<NAME>=<value> of its environment, in the environment's order:
`--<name>` (lower case, `_` -> `-`) followed by the value, or alone for an empty value. Written from that description,
for vllm_serve_env_profile's drill in the vllm_serve scenario.
"""

import os
import sys

PREFIX = "SM_VLLM_"

argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--port", "8080"]
for name, value in os.environ.items():
    if name.startswith(PREFIX):
        argv.append("--" + name.removeprefix(PREFIX).lower().replace("_", "-"))
        if value:
            argv.append(value)
os.execv(sys.executable, argv)
