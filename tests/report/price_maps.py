"""Turn the real LiteLLM and OpenRouter price maps in ``tests/fixtures/external`` into price snapshots.

A deliberately small conversion (chat models; base tier and the ``above_200k``/``above_272k``
tiers; input, output, cache read and cache write prices) so the report can be tested on
thousands of real price rows and a real history (the 2025-09-01 LiteLLM copy against the
2026-11-20 one) without depending on the importers being written elsewhere.
"""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path

from econ.load.ceilings import USD_PER_MTOK

EXTERNAL = Path(__file__).resolve().parents[1] / "fixtures" / "external"
LITELLM_NEW = (EXTERNAL / "litellm_model_prices.json", date(2026, 11, 20))
LITELLM_OLD = (EXTERNAL / "tokencost_model_prices_2025-09-01.json", date(2025, 9, 1))
OPENROUTER = (EXTERNAL / "openrouter_models_2026-08-19.json", date(2026, 8, 19))
COLUMNS = [
    "provider",
    "model",
    "variant",
    "tier_min_prompt_tokens",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
    "max_input_tokens",
    "speed_ratio",
    "hugging_face_id",
    "source_url",
    "source_key",
]
TIERS = {"above_200k_tokens": 200_000, "above_272k_tokens": 272_000}


def _per_mtok(value) -> str:
    if value is None or value == "":
        return ""
    return repr(round(float(value) * 1e6, 10))


def litellm_rows(path: Path) -> list[dict]:
    entries = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for key, e in sorted(entries.items()):
        if not isinstance(e, dict) or e.get("mode") != "chat":
            continue
        if e.get("input_cost_per_token") is None or e.get("output_cost_per_token") is None:
            continue
        max_in = e.get("max_input_tokens")
        max_in = int(max_in) if isinstance(max_in, (int, float)) and max_in > 0 else None
        url = e.get("source") if isinstance(e.get("source"), str) else "https://github.com/BerriAI/litellm"
        base = dict(
            provider=str(e.get("litellm_provider") or "unknown"),
            model=key,
            variant="standard",
            max_input_tokens=max_in or "",
            speed_ratio="",
            hugging_face_id="",
            source_url=url,
            source_key=key,
            cache_storage_usd_per_mtok_hour="",
        )
        rows.append(
            base
            | dict(
                tier_min_prompt_tokens=0,
                input_usd_per_mtok=_per_mtok(e["input_cost_per_token"]),
                output_usd_per_mtok=_per_mtok(e["output_cost_per_token"]),
                cache_read_usd_per_mtok=_per_mtok(e.get("cache_read_input_token_cost")),
                cache_write_5m_usd_per_mtok=_per_mtok(e.get("cache_creation_input_token_cost")),
                cache_write_1h_usd_per_mtok=_per_mtok(e.get("cache_creation_input_token_cost_above_1hr")),
            )
        )
        for suffix, threshold in TIERS.items():
            inp, out = e.get(f"input_cost_per_token_{suffix}"), e.get(f"output_cost_per_token_{suffix}")
            if inp is None or out is None or (max_in is not None and threshold >= max_in):
                continue
            rows.append(
                base
                | dict(
                    tier_min_prompt_tokens=threshold,
                    input_usd_per_mtok=_per_mtok(inp),
                    output_usd_per_mtok=_per_mtok(out),
                    cache_read_usd_per_mtok=_per_mtok(e.get(f"cache_read_input_token_cost_{suffix}")),
                    cache_write_5m_usd_per_mtok="",
                    cache_write_1h_usd_per_mtok="",
                )
            )
    return rows


def openrouter_rows(path: Path) -> list[dict]:
    rows = []
    for m in sorted(json.loads(path.read_text(encoding="utf-8"))["data"], key=lambda m: m["id"]):
        p = m.get("pricing") or {}
        try:
            if float(p.get("prompt", -1)) < 0 or float(p.get("completion", -1)) < 0:
                continue
            # above the snapshot spec's ceiling (1e5 USD/MTok): a per-audio price such as mai-transcribe's, which the
            # importer skips too
            if max(float(p["prompt"]), float(p["completion"])) * 1e6 > USD_PER_MTOK.value:
                continue
        except ValueError:
            continue
        rows.append(
            dict(
                provider="openrouter",
                model=m["id"],
                variant="standard",
                tier_min_prompt_tokens=0,
                input_usd_per_mtok=_per_mtok(p["prompt"]),
                output_usd_per_mtok=_per_mtok(p["completion"]),
                cache_read_usd_per_mtok=_per_mtok(p.get("input_cache_read")),
                cache_write_5m_usd_per_mtok=_per_mtok(p.get("input_cache_write")),
                cache_write_1h_usd_per_mtok="",
                cache_storage_usd_per_mtok_hour="",
                max_input_tokens=m.get("context_length") or "",
                speed_ratio="",
                hugging_face_id=m.get("hugging_face_id") or "",
                source_url="https://openrouter.ai/api/v1/models",
                source_key=m["id"],
            )
        )
    return rows


def write_snapshot(data_dir: Path, source: str, when: date, rows: list[dict]) -> Path:
    folder = Path(data_dir) / "snapshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{source}_{when.isoformat()}.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_real_snapshots(data_dir: Path) -> None:
    """Both LiteLLM maps and the OpenRouter listing, as dated snapshots in ``data_dir/snapshots``."""
    for path, when in (LITELLM_OLD, LITELLM_NEW):
        write_snapshot(data_dir, "litellm", when, litellm_rows(path))
    write_snapshot(data_dir, "openrouter", OPENROUTER[1], openrouter_rows(OPENROUTER[0]))
