"""Write ``data/inferencex_launches.csv`` and ``data/inferencex_node_launches.csv``: what InferenceX's master
configs launched.

InferenceX (github.com/SemiAnalysisAI/InferenceX, Apache-2.0) states every benchmark it runs in
``.github/configs/nvidia-master.yaml`` and ``amd-master.yaml``: per model, chip, engine, format and engine image, and
per input and output length, a search space. A disaggregated entry names its prefill and decode pools (workers,
tensor and expert parallel degrees, attention data parallel) and its concurrencies; a single-node (aggregated) entry
its degrees and a concurrency range. Each says whether it speculates (MTP). Every version of those files committed up
to ``--until`` is read; a launch is one row, with the first and last commit that held it. Deterministic: the same
clone gives the same bytes.

    python scripts/inferencex_launches.py PATH/TO/InferenceX data/

Needs git and PyYAML (``pip install pyyaml``); econ itself reads only the CSVs.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
from pathlib import Path

import yaml

FILES = (".github/configs/nvidia-master.yaml", ".github/configs/amd-master.yaml")
MODELS = {
    "dsr1": "deepseek-ai/DeepSeek-R1",
    "dsr1-fp8": "deepseek-ai/DeepSeek-R1",
    "DeepSeek-R1-0528": "deepseek-ai/DeepSeek-R1",
    "gptoss": "openai/gpt-oss-120b",
    "kimik2.5": "moonshotai/Kimi-K2.5",
    "dsv4": "deepseek-ai/DeepSeek-V4-Pro",
    "glm5": "zai-org/GLM-5",
    "qwen3.5": "Qwen/Qwen3.5-397B-A17B",
    "minimaxm2.5": "MiniMaxAI/MiniMax-M2.5",
}
"""The Hugging Face id each ``model-prefix`` names (the configs' ``model`` is a local path or a re-release)."""
ENGINES = {"trt": "trtllm", "sglang": "sglang", "vllm": "vllm"}
"""The engine a ``framework`` names (``dynamo-trt``, ``sglang-disagg``, …): the first of these it contains."""
COMMON = ("model_prefix", "model_path", "system", "engine", "precision", "isl", "osl", "speculative_decoding")
DATES = ("first_date", "last_date", "first_commit", "last_commit", "config_key")
SPLIT = (
    *COMMON, "concurrency", "prefill_workers", "prefill_tp", "prefill_ep", "prefill_dp_attention", "decode_workers",
    "decode_tp", "decode_ep", "decode_dp_attention", "recipe", "decode_max_batch", "draft_tokens", *DATES,
)  # fmt: skip
RECIPE = re.compile(r"_batch(\d+)_.*?_mtp(\d+)")
"""What a recipe's name states (``ctx1_gen4_tep8_batch8_eplb0_mtp3.yaml``): the decode engine's batch limit per
attention rank and the MTP draft tokens (0: none)."""
NODE = (*COMMON, "image", "tp", "ep", "dp_attention", "concurrency_start", "concurrency_end", *DATES)
OUTPUTS = {"inferencex_launches.csv": SPLIT, "inferencex_node_launches.csv": NODE}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def _common(key: str, entry: dict, length: dict, space: dict) -> dict:
    framework = str(entry.get("framework", ""))
    prefix = str(entry.get("model-prefix", ""))
    return {
        "model_prefix": prefix,
        "model_path": MODELS.get(prefix, ""),
        "system": str(entry.get("runner", "")).split("-")[0].split("_")[0],
        "engine": next((e for k, e in ENGINES.items() if k in framework), framework),
        "precision": entry.get("precision", ""),
        "isl": length["isl"],
        "osl": length["osl"],
        "speculative_decoding": space.get("spec-decoding", "none"),
        "config_key": key,
    }


def launches(text: str) -> dict[str, list[dict]]:
    """The launches of one version of a master config, by output file."""
    out = {name: [] for name in OUTPUTS}
    try:
        config = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError:  # a version that did not parse (a full-width comma) launched nothing
        return out
    for key, entry in config.items():
        if not isinstance(entry, dict):
            continue
        lengths = entry.get("seq-len-configs") or (entry.get("scenarios") or {}).get("fixed-seq-len") or []
        for length in lengths:
            for space in length.get("search-space", []):
                common = _common(key, entry, length, space)
                if not entry.get("disagg"):
                    if entry.get("multinode") or space.get("conc-start") is None:
                        continue
                    out["inferencex_node_launches.csv"].append(
                        {
                            **common,
                            "image": entry.get("image", ""),
                            "tp": space.get("tp"),
                            "ep": space.get("ep", 1),
                            "dp_attention": int(bool(space.get("dp-attn"))),
                            "concurrency_start": space.get("conc-start"),
                            "concurrency_end": space.get("conc-end"),
                        }
                    )
                    continue
                p, d = space.get("prefill") or {}, space.get("decode") or {}
                if not (p.get("num-worker") and d.get("num-worker")):  # a pool of 0 workers: not a split launch
                    continue
                settings = [str(x) for pool in (p, d) for x in pool.get("additional-settings") or []]
                recipe = next((x.split("=", 1)[1].rsplit("/", 1)[-1] for x in settings if "CONFIG_FILE=" in x), "")
                named = RECIPE.search(recipe)
                for conc in space.get("conc-list", []):
                    out["inferencex_launches.csv"].append(
                        {
                            **common,
                            "concurrency": conc,
                            "recipe": recipe,
                            "decode_max_batch": named.group(1) if named else "",
                            "draft_tokens": named.group(2) if named else "",
                            **{
                                f"{pool}_{k}": int(bool(v.get("dp-attn")))
                                if k == "dp_attention"
                                else v.get(k.replace("workers", "num-worker"))
                                for pool, v in (("prefill", p), ("decode", d))
                                for k in ("workers", "tp", "ep", "dp_attention")
                            },
                        }
                    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", help="a git clone of github.com/SemiAnalysisAI/InferenceX")
    ap.add_argument("out", type=Path, help="the folder the two CSV files go to")
    ap.add_argument("--until", default="2026-04-28", help="last commit date read (default: the day after the dump)")
    args = ap.parse_args()
    seen: dict[str, dict[tuple, dict]] = {name: {} for name in OUTPUTS}
    for path in FILES:
        log = _git(args.repo, "log", "--reverse", f"--until={args.until}", "--format=%H %cs", "--", path)
        for line in log.splitlines():
            commit, date = line.split()
            for name, rows in launches(_git(args.repo, "show", f"{commit}:{path}")).items():
                for row in rows:
                    key = tuple(row[c] for c in OUTPUTS[name] if c not in DATES[:4])
                    first = seen[name].setdefault(key, {**row, "first_date": date, "first_commit": commit})
                    first.update(last_date=date, last_commit=commit)
    for name, columns in OUTPUTS.items():
        with (args.out / name).open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
            w.writeheader()
            for row in sorted(seen[name].values(), key=lambda r: tuple(str(r[c]) for c in columns)):
                w.writerow(row)


if __name__ == "__main__":
    main()
