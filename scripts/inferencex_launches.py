"""Write ``data/inferencex_launches.csv``: every disaggregated launch InferenceX's master configs named.

InferenceX (github.com/SemiAnalysisAI/InferenceX, Apache-2.0) states each multi-node benchmark it runs in
``.github/configs/nvidia-master.yaml`` and ``amd-master.yaml``: per model, chip, engine and format, and per input
and output length, a search space of prefill and decode pools (workers, tensor and expert parallel degrees,
attention data parallel), whether it speculates (MTP) and the concurrencies it runs. Every version of those files
committed up to ``--until`` is read; a launch (one concurrency of one search-space entry) is one row, with the first
and last commit that held it. Deterministic: the same clone gives the same bytes.

    python scripts/inferencex_launches.py PATH/TO/InferenceX > data/inferencex_launches.csv

Needs git and PyYAML (``pip install pyyaml``); econ itself reads only the CSV.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys

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
COLUMNS = (
    "model_prefix", "model_path", "system", "engine", "precision", "isl", "osl", "speculative_decoding",
    "concurrency", "prefill_workers", "prefill_tp", "prefill_ep", "prefill_dp_attention", "decode_workers",
    "decode_tp", "decode_ep", "decode_dp_attention", "first_date", "last_date", "first_commit", "last_commit",
    "config_key",
)  # fmt: skip


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def launches(text: str) -> list[dict]:
    """The disaggregated launches of one version of a master config."""
    out = []
    try:
        config = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError:  # a version that did not parse (a full-width comma) launched nothing
        return out
    for key, entry in config.items():
        if not isinstance(entry, dict) or not entry.get("disagg"):
            continue
        lengths = entry.get("seq-len-configs") or (entry.get("scenarios") or {}).get("fixed-seq-len") or []
        framework = str(entry.get("framework", ""))
        engine = next((e for k, e in ENGINES.items() if k in framework), framework)
        prefix = str(entry.get("model-prefix", ""))
        for length in lengths:
            for space in length.get("search-space", []):
                p, d = space.get("prefill") or {}, space.get("decode") or {}
                if not (p.get("num-worker") and d.get("num-worker")):  # a pool of 0 workers: not a split launch
                    continue
                for conc in space.get("conc-list", []):
                    out.append(
                        {
                            "model_prefix": prefix,
                            "model_path": MODELS.get(prefix, ""),
                            "system": str(entry.get("runner", "")).split("-")[0],
                            "engine": engine,
                            "precision": entry.get("precision", ""),
                            "isl": length["isl"],
                            "osl": length["osl"],
                            "speculative_decoding": space.get("spec-decoding", "none"),
                            "concurrency": conc,
                            **{
                                f"{pool}_{k}": int(bool(v.get("dp-attn")))
                                if k == "dp_attention"
                                else v.get(k.replace("workers", "num-worker"))
                                for pool, v in (("prefill", p), ("decode", d))
                                for k in ("workers", "tp", "ep", "dp_attention")
                            },
                            "config_key": key,
                        }
                    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo", help="a git clone of github.com/SemiAnalysisAI/InferenceX")
    ap.add_argument("--until", default="2026-04-28", help="last commit date read (default: the day after the dump)")
    args = ap.parse_args()
    seen: dict[tuple, dict] = {}
    for path in FILES:
        log = _git(args.repo, "log", "--reverse", f"--until={args.until}", "--format=%H %cs", "--", path)
        for line in log.splitlines():
            commit, date = line.split()
            for row in launches(_git(args.repo, "show", f"{commit}:{path}")):
                key = tuple(
                    row[c] for c in COLUMNS if c not in ("first_date", "last_date", "first_commit", "last_commit")
                )
                first = seen.setdefault(key, {**row, "first_date": date, "first_commit": commit})
                first.update(last_date=date, last_commit=commit)
    w = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in sorted(seen.values(), key=lambda r: tuple(str(r[c]) for c in COLUMNS)):
        w.writerow(row)


if __name__ == "__main__":
    main()
