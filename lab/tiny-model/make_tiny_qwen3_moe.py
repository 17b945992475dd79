"""Generate a tiny, randomly initialised Qwen3-MoE model that real vLLM (CPU build) can serve.

No model can be downloaded here, so the lab makes its own: a 2-layer Qwen3MoeForCausalLM with
4 experts (about 1 MB of weights) and a 512-token byte-level BPE tokenizer trained on a few
sentences, with a chat template so /v1/chat/completions works. head_dim must be a size vLLM's
CPU attention supports (64); 16 loads but kills the engine at the first request.

Usage: python make_tiny_qwen3_moe.py OUTPUT_DIR [--architecture NAME] [--head-dim N]
--architecture rewrites config.json's architectures list, to provoke vLLM's own refusal of a
class it does not have; --head-dim 16 provokes the engine crash at the first request;
--max-positions 8388608 lets --max-model-len ask for more tokens than a 1 GiB CPU KV cache holds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TRAINING_TEXT = [
    "The DGX Spark has one GB10 superchip with unified memory.",
    "Two Sparks are joined by a ConnectX-7 link for NCCL traffic.",
    "vLLM serves large mixture of experts models across both nodes.",
    "Ray places the workers; the gate reads the facts from the log.",
    "Hello, how are you today? I am fine, thank you.",
]


def make_tokenizer(output: Path) -> None:
    tokenizer = Tokenizer(models.BPE(unk_token=None))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(TRAINING_TEXT * 20, trainer=trainer)
    tokenizer.save(str(output / "tokenizer.json"))
    (output / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
                "bos_token": None,
                "chat_template": CHAT_TEMPLATE,
                "model_max_length": 4096,
            },
            indent=2,
        )
    )


def make_model(output: Path, head_dim: int, max_positions: int) -> None:
    torch.manual_seed(0)
    config = Qwen3MoeConfig(
        vocab_size=512,
        hidden_size=128,
        intermediate_size=256,
        moe_intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=head_dim,
        num_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=max_positions,
        eos_token_id=2,
        bos_token_id=None,
        pad_token_id=0,
        torch_dtype="bfloat16",
    )
    Qwen3MoeForCausalLM(config).to(torch.bfloat16).save_pretrained(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--architecture", help="replace config.json's architectures with this class name")
    parser.add_argument("--head-dim", type=int, default=64, help="attention head size (vLLM's CPU attention needs 64)")
    parser.add_argument("--max-positions", type=int, default=4096, help="max_position_embeddings (large values allow a KV cache too small)")
    args = parser.parse_args()
    args.output.mkdir(parents=True, exist_ok=True)
    make_model(args.output, args.head_dim, args.max_positions)
    make_tokenizer(args.output)
    if args.architecture:
        config_path = args.output / "config.json"
        config = json.loads(config_path.read_text())
        config["architectures"] = [args.architecture]
        config_path.write_text(json.dumps(config, indent=2))


if __name__ == "__main__":
    main()
