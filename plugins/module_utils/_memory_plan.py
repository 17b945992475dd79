# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Will the model fit? A memory plan for vLLM across 1..N unified-memory nodes, made before launch.

Per node, in bytes (GiB = 2**30 in the result):

    budget    = min(MemAvailable, gpu_memory_utilization x total)        total = MemTotal
    weights   = weights_bytes / nodes_used                                (tensor x pipeline parallel)
    kv_budget = budget - weights - reserve

The plan fits when every node used has kv_budget > 0 and, with kv_cache_bytes_per_token and
max_model_len given, room for one request of max_model_len tokens (vLLM refuses to start
otherwise: "To serve at least one request with the model's max seq len ..."). With
startup_free_gib (DEFAULT_STARTUP_FREE_GIB; None skips it), a node also fails when gpu_memory_utilization x total exceeds it: vLLM's
startup check compares that product with the free memory CUDA reports, and on a GB10 that caps
at ~101-102 GiB of 121.7 even headless with caches dropped (SPARK_FACTS §2.1, MiaAI GLM-5.3 #47:
0.87 fails). MemAvailable is the figure to trust on unified memory (cudaMemGetInfo is not).

The reserve (DEFAULT_RESERVE_GIB per node) is what vLLM takes out of its budget besides weights
and KV: the activation peak of its profiling run, CUDA graphs (0.69 GiB for Qwen3.5 on two Sparks,
SPARK_FACTS §2.6), the CUDA context and NCCL/cuBLAS workspaces. It is an allowance, not a
measurement: gpu_memory_utilization is not a hard cap while profiling on GB10 (vllm#46307), and a
wrong CUDA-graph estimate can over-allocate KV (vllm#44740). The ~20 GiB between total and what
CUDA reports free is not part of it: that is the OS and driver share, outside vLLM's budget, and
the startup_free_gib check covers it.

Weights are split evenly across the nodes used (tensor parallel shards each layer, pipeline
parallel splits the layers); the few replicated tensors (norms, small encoders) fall in the reserve.

No I/O here.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

GIB = 1 << 30
KIB = 1 << 10
DEFAULT_RESERVE_GIB = 5.0
# What CUDA reports free at startup on a GB10: ~101-102 GiB of 121.7 (SPARK_FACTS §2.1); the midpoint.
DEFAULT_STARTUP_FREE_GIB = 101.5
# The largest cluster needed_nodes considers.
MAX_NODES = 64
# Every number given must be below this (2**63): far above any memory in bytes or KiB, and low enough that the plan's
# products (KiB to bytes, tokens x bytes per token) stay finite floats.
MAX_INPUT = 1 << 63
NODE_KEYS = ("name", "mem_available_kib", "mem_total_kib")


class MemoryPlanError(ValueError):
    """An input the plan cannot be made from (named in the message)."""


def _type_name(value: Any) -> str:
    """The builtin type behind a value (Ansible hands filters tagged subclasses of str, int, dict ...)."""
    for base in type(value).__mro__:
        if base in (bool, int, float, str, list, tuple, dict, type(None)):
            return base.__name__
    return type(value).__name__


def _shown(value: Any) -> str:
    """A value as the error shows it: its repr, cut short when long (10**400 has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def _number(name: str, value: Any, *, allow_zero: bool = False, integer: bool = False) -> float:
    # math.isfinite() of an int past the float range (10**400) raises: compare with MAX_INPUT first.
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (isinstance(value, int) or math.isfinite(value))
    if ok and value >= MAX_INPUT:
        raise MemoryPlanError(f"memory plan: {name} must be below 2**63, got {_type_name(value)} {_shown(value)}")
    if ok and integer:
        ok = float(value).is_integer()
    if not ok or value < 0 or (value == 0 and not allow_zero):
        wanted = "a number >= 0" if allow_zero else "a positive " + ("integer" if integer else "number")
        raise MemoryPlanError(f"memory plan: {name} must be {wanted}, got {_type_name(value)} {_shown(value)}")
    return value


def _nodes(nodes: Any) -> list[dict[str, Any]]:
    if not isinstance(nodes, Sequence) or isinstance(nodes, (str, bytes)) or not nodes:
        raise MemoryPlanError("memory plan: nodes must be a non-empty list of {name, mem_available_kib[, mem_total_kib]}")
    checked = []
    seen = set()
    for index, node in enumerate(nodes):
        where = f"nodes[{index}]"
        if not isinstance(node, Mapping):
            raise MemoryPlanError(f"memory plan: {where} must be a dictionary, got {_type_name(node)}")
        unknown = [key for key in node if key not in NODE_KEYS]
        if unknown:
            raise MemoryPlanError(f"memory plan: {where} has unknown key {unknown[0]!r}; allowed keys: {', '.join(NODE_KEYS)}")
        name = node.get("name")
        if not isinstance(name, str) or not name:
            raise MemoryPlanError(f"memory plan: {where}.name must be a non-empty string, got {name!r}")
        if name in seen:
            raise MemoryPlanError(f"memory plan: {where}.name {name!r} is given twice")
        seen.add(name)
        available = _number(f"{where}.mem_available_kib ({name})", node.get("mem_available_kib"), integer=True) * KIB
        total = available
        if node.get("mem_total_kib") is not None:
            total = _number(f"{where}.mem_total_kib ({name})", node["mem_total_kib"], integer=True) * KIB
            if available > total:
                raise MemoryPlanError(f"memory plan: {where} ({name}): mem_available_kib exceeds mem_total_kib")
        checked.append({"name": name, "available": float(available), "total": float(total)})
    return checked


def _gib(value: float) -> float:
    return round(value / GIB, 2)


def _round_up(fraction: float) -> float:
    """The smallest two-decimal fraction strictly above ``fraction``."""
    return round((math.floor(fraction * 100 + 1e-9) + 1) / 100, 2)


def _needed_kv(count: int, bytes_per_token: float | None, max_model_len: int | None) -> float:
    """KV bytes one node must hold for one request of max_model_len tokens (0 when not known)."""
    if bytes_per_token is None or max_model_len is None:
        return 0.0
    return max_model_len * bytes_per_token / count


def _subset_fits(chosen: list[dict[str, Any]], weights: float, reserve: float, *, kv_need: float, utilization: float, startup_free: float | None) -> bool:
    for node in chosen:
        budget = min(node["available"], utilization * node["total"], startup_free if startup_free is not None else math.inf)
        kv = budget - weights / len(chosen) - reserve
        if kv <= 0 or kv < kv_need:
            return False
    return True


def _suggest(
    nodes: list[dict[str, Any]], weights: float, reserve: float, *, utilization: float, startup_free: float | None, bpt: float | None, mml: int | None
):
    """The fewest nodes (those with the largest budgets) that hold the model, at the utilization the startup check allows."""

    def capacity(node: dict[str, Any]) -> float:
        return min(node["available"], utilization * node["total"], startup_free if startup_free is not None else math.inf)

    ranked = sorted(range(len(nodes)), key=lambda index: -capacity(nodes[index]))
    suggested, names = None, None
    for count in range(1, len(nodes) + 1):
        chosen = sorted(ranked[:count])
        if _subset_fits(
            [nodes[index] for index in chosen], weights, reserve, kv_need=_needed_kv(count, bpt, mml), utilization=utilization, startup_free=startup_free
        ):
            suggested, names = count, [nodes[index]["name"] for index in chosen]
            break
    best = nodes[ranked[0]]
    needed = None
    for count in range(1, MAX_NODES + 1):
        if _subset_fits([best] * count, weights, reserve, kv_need=_needed_kv(count, bpt, mml), utilization=utilization, startup_free=startup_free):
            needed = count
            break
    return suggested, names, needed, best["name"]


def plan_memory(
    weights_bytes: Any,
    nodes: Any,
    gpu_memory_utilization: Any,
    *,
    tensor_parallel_size: Any = None,
    pipeline_parallel_size: Any = None,
    reserve_gib: Any = DEFAULT_RESERVE_GIB,
    kv_cache_bytes_per_token: Any = None,
    max_model_len: Any = None,
    startup_free_gib: Any = DEFAULT_STARTUP_FREE_GIB,
) -> dict[str, Any]:
    """The plan (see the module docstring); raises MemoryPlanError naming a bad input."""
    weights = float(_number("weights_bytes", weights_bytes))
    checked_nodes = _nodes(nodes)
    utilization = _number("gpu_memory_utilization", gpu_memory_utilization)
    if utilization > 1:
        raise MemoryPlanError(f"memory plan: gpu_memory_utilization must be in (0, 1], got {utilization!r}")
    reserve = _number("reserve_gib", reserve_gib, allow_zero=True) * GIB
    bpt = None if kv_cache_bytes_per_token is None else _number("kv_cache_bytes_per_token", kv_cache_bytes_per_token)
    mml = None if max_model_len is None else int(_number("max_model_len", max_model_len, integer=True))
    startup_free = None if startup_free_gib is None else _number("startup_free_gib", startup_free_gib) * GIB
    tensor = 1 if tensor_parallel_size is None else int(_number("tensor_parallel_size", tensor_parallel_size, integer=True))
    pipeline = 1 if pipeline_parallel_size is None else int(_number("pipeline_parallel_size", pipeline_parallel_size, integer=True))
    if tensor_parallel_size is None and pipeline_parallel_size is None:
        tensor = len(checked_nodes)
    count = tensor * pipeline
    if count > len(checked_nodes):
        raise MemoryPlanError(
            f"memory plan: tensor_parallel_size x pipeline_parallel_size = {tensor} x {pipeline} = {count} needs {count} nodes "
            f"(one GB10 GPU each), {len(checked_nodes)} given"
        )
    used = checked_nodes[:count]
    share = weights / count
    kv_need = _needed_kv(count, bpt, mml)

    rows = []
    problems = []
    for node in used:
        wanted = utilization * node["total"]
        budget = min(node["available"], wanted)
        kv = budget - share - reserve
        row = {
            "name": node["name"],
            "mem_available_gib": _gib(node["available"]),
            "mem_total_gib": _gib(node["total"]),
            "budget_gib": _gib(budget),
            "budget_limited_by": "mem_available" if node["available"] < wanted else "gpu_memory_utilization",
            "weights_share_gib": _gib(share),
            "reserve_gib": _gib(reserve),
            "kv_budget_gib": _gib(kv),
            "startup_check_passes": startup_free is None or wanted <= startup_free,
            "fits": True,
        }
        limit = "MemAvailable" if row["budget_limited_by"] == "mem_available" else f"{utilization:g} x {row['mem_total_gib']:.2f} GiB total"
        if not row["startup_check_passes"]:
            row["fits"] = False
            problems.append(
                f"{node['name']}: vLLM's startup check refuses gpu_memory_utilization {utilization:g} "
                f"({_gib(wanted):.2f} GiB wanted, CUDA reports ~{_gib(startup_free or 0):.2f} GiB free)"
            )
        if kv <= 0:
            row["fits"] = False
            problems.append(
                f"{node['name']}: budget {row['budget_gib']:.2f} GiB ({limit}) - weights {row['weights_share_gib']:.2f} GiB "
                f"- reserve {row['reserve_gib']:.2f} GiB = KV {row['kv_budget_gib']:.2f} GiB, no room for a KV cache"
            )
        elif kv < kv_need:
            row["fits"] = False
            problems.append(f"{node['name']}: KV budget {row['kv_budget_gib']:.2f} GiB < {_gib(kv_need):.2f} GiB needed for one request of max_model_len {mml}")
        rows.append(row)

    min_kv = min(min(node["available"], utilization * node["total"]) - share - reserve for node in used)
    max_tokens = None
    if bpt is not None:
        max_tokens = int(min_kv * count // bpt) if min_kv > 0 else 0
    suggested, suggested_names, needed, best = _suggest(checked_nodes, weights, reserve, utilization=utilization, startup_free=startup_free, bpt=bpt, mml=mml)
    fits = all(row["fits"] for row in rows)
    return {
        "fits": fits,
        "reason": None if fits else "; ".join(problems),
        "nodes_used": count,
        "node_names": [node["name"] for node in used],
        "tensor_parallel_size": tensor,
        "pipeline_parallel_size": pipeline,
        "gpu_memory_utilization": utilization,
        "weights_bytes": int(weights),
        "weights_gib": _gib(weights),
        "weights_share_gib": _gib(share),
        "reserve_gib": _gib(reserve),
        "kv_budget_gib": _gib(min_kv),
        "nodes": rows,
        "kv_cache_bytes_per_token": bpt,
        "max_model_len": mml,
        "max_tokens": max_tokens,
        "max_concurrency": round(max_tokens / mml, 2) if max_tokens is not None and mml else None,
        "startup_free_gib": None if startup_free is None else _gib(startup_free),
        "max_gpu_memory_utilization": _startup_ceiling(used, startup_free),
        "min_gpu_memory_utilization": _utilization_floor(used, share, reserve, kv_need=kv_need, startup_free=startup_free),
        "suggested_nodes": suggested,
        "suggested_node_names": suggested_names,
        "needed_nodes": needed,
        "needed_nodes_like": best,
        "nodes_given": len(checked_nodes),
    }


def _startup_ceiling(used: list[dict[str, Any]], startup_free: float | None) -> float | None:
    """The highest two-decimal utilization vLLM's startup check accepts on every node used."""
    if startup_free is None:
        return None
    return min(1.0, math.floor(min(startup_free / node["total"] for node in used) * 100 + 1e-9) / 100)


def _utilization_floor(used: list[dict[str, Any]], share: float, reserve: float, *, kv_need: float, startup_free: float | None) -> float | None:
    """The lowest two-decimal utilization that fits these nodes, or None when no utilization does."""
    needed = share + reserve + kv_need
    if any(node["available"] <= needed for node in used):
        return None
    floor = _round_up(max(needed / node["total"] for node in used))
    ceiling = _startup_ceiling(used, startup_free)
    if floor > 1 or (ceiling is not None and floor > ceiling):
        return None
    return floor


def _layout(count: int) -> str:
    if count & (count - 1) == 0:
        return f"--tensor-parallel-size {count}"
    return f"--pipeline-parallel-size {count} (or a tensor x pipeline split whose product is {count})"


def memory_plan_message(plan: Mapping[str, Any]) -> str:
    """One readable paragraph: what fits, or why not and the fixes, most useful first."""
    count = plan["nodes_used"]
    where = f"{count} node{'s' if count > 1 else ''} ({', '.join(plan['node_names'])})"
    utilization = plan["gpu_memory_utilization"]
    sizes = f"weights {plan['weights_gib']:.2f} GiB, {plan['weights_share_gib']:.2f} GiB per node, reserve {plan['reserve_gib']:.2f} GiB per node"
    if plan["fits"]:
        text = f"The model fits {where} at gpu_memory_utilization {utilization:g}: {sizes}, KV budget {plan['kv_budget_gib']:.2f} GiB per node"
        if plan["max_tokens"] is not None:
            text += f" (about {plan['max_tokens']:,} tokens"
            text += f", {plan['max_concurrency']:g}x concurrency at max_model_len {plan['max_model_len']})" if plan["max_concurrency"] is not None else ")"
        return text + "."
    startup_ok = all(row["startup_check_passes"] for row in plan["nodes"])
    suggested = plan["suggested_nodes"]
    options = []
    if suggested is not None and (suggested != count or plan["suggested_node_names"] != plan["node_names"]):
        options.append(f"serve it across {suggested} node{'s' if suggested > 1 else ''} ({', '.join(plan['suggested_node_names'])}) with {_layout(suggested)}")
    if plan["min_gpu_memory_utilization"] is not None and plan["min_gpu_memory_utilization"] > utilization:
        options.append(f"raise --gpu-memory-utilization to {plan['min_gpu_memory_utilization']:g} on these nodes")
    if startup_ok and plan["max_tokens"] and plan["max_model_len"] and plan["max_tokens"] < plan["max_model_len"]:
        options.append(f"lower --max-model-len to {plan['max_tokens']} or less")
    if suggested is None:
        needed = plan["needed_nodes"]
        if needed is not None:
            options.append(f"serve it across {needed} nodes like {plan['needed_nodes_like']} with {_layout(needed)} ({plan['nodes_given']} given)")
        else:
            options.append("add nodes, free memory (MemAvailable) or serve a smaller quantization: no number of nodes like these holds it")
    fixes = "; or ".join(options)
    if not startup_ok:
        lower = f"lower --gpu-memory-utilization to {plan['max_gpu_memory_utilization']:g} or less (vLLM's startup check)"
        fixes = f"{lower}, and then {fixes}" if options else lower
    return f"The model does not fit {where} at gpu_memory_utilization {utilization:g} ({sizes}): {plan['reason']}. Fix: {fixes}."


def startup_free_message(readings: Mapping[str, Mapping[str, Any]], utilization: float, page_cache_dropped: bool) -> str:
    """'' when every node's MemFree (read right before the ranks start) reaches vLLM's start-up check, utilization x
    MemTotal; else why no rank was started, with the first short node's figures and the utilization it could take.

    readings: each node's gb10_facts (memory_free_kib, memory_cached_kib, memory_total_kib), in rank order."""
    short = [node for node, facts in readings.items() if facts["memory_free_kib"] < utilization * facts["memory_total_kib"]]
    if not short:
        return ""
    facts = readings[short[0]]
    free, cached, total = (facts[key] * KIB / GIB for key in ("memory_free_kib", "memory_cached_kib", "memory_total_kib"))
    most = math.floor(facts["memory_free_kib"] * 100 / facts["memory_total_kib"]) / 100
    drop = "" if page_cache_dropped else "set vllm_serve_drop_page_cache to true, "
    return (
        f"{', '.join(short)} {'has' if len(short) == 1 else 'have'} less memory free than vLLM's start-up check asks for, so no rank "
        f"was started: {short[0]} has {free:.1f} GiB free (MemFree {'after the' if page_cache_dropped else 'with no'} page-cache drop, with "
        f"{cached:.1f} GiB of page cache), and vllm_serve_gpu_memory_utilization {utilization} of its {total:.1f} GiB asks for "
        f'{utilization * total:.1f} GiB: vLLM would stop with "Free memory on device ... on startup is less than desired GPU memory '
        'utilization". Stop what holds memory on that node (other containers: docker ps; a desktop session), '
        f"{drop}or lower vllm_serve_gpu_memory_utilization to at most {most:.2f}."
    )
