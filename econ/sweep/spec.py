"""The sweep spec: a TOML file (stdlib ``tomllib``) naming what to evaluate and what to keep.

    scenario = "base"                  # values of draw 0, ranges of the other draws
    pool = "decode"                    # the pool evaluated (decode steps)
    keep = ["frontier", "argmin"]      # any of: points (every fitting point), frontier, argmin

    [select]
    models = ["DeepSeek-V3"]           # default: every model with a modelled cache
    chips = ["H100", "GB200"]          # default: every chip
    formats = ["fp8"]                  # default: the scenario's weight_format and its alternatives
    layouts = "grid"                   # grid (the search grid), named (layouts.csv), all
    max_replica_chips = 512            # default: the scenario's

    [grid]
    batch = { min = 1, max = 16384, points = 15 }            # log-spaced, whole sequences
    context_tokens = { min = 1024, max = 131072, points = 8 }  # log-spaced, whole tokens

    [draws]
    count = 100                        # draw 0 = the scenario's values, draws 1… Monte Carlo over its ranges
    per_partition = 25                 # draws per partition (the draw block)
    seed = 0
    vary = ["decode_mbu_frac", "usd_per_chip_hour"]   # default: every assumption below that has a range

    [limits]
    memory_per_worker_mb = 256         # a partition is evaluated in pieces that fit this

A mistake is an :class:`~econ.errors.EconError` naming the file, the line and key, and the fix.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from econ.errors import DataError, EconError
from econ.files import read_bounded

POOLS = ("decode",)
KEEP = ("points", "frontier", "argmin")
LAYOUT_SETS = ("grid", "named", "all")
VARIABLE = (
    "decode_mfu_frac",
    "decode_mbu_frac",
    "link_bandwidth_frac",
    "scale_up_latency_s",
    "scale_out_latency_s",
    "step_overhead_s",
    "speculative_tokens",
    "speculative_acceptance_frac",
    "hbm_reserve_frac",
    "usd_per_chip_hour",
    "user_speed_target_tokens_per_s",
    "kv_cache_format",
)
"""Assumptions a draw may vary: the decode run settings, the speed target of the argmin and the KV-cache format."""

MAX_SPEC_BYTES = 1 << 20
MAX_GRID_POINTS = 10_000
MAX_DRAWS = 1_000_000  # the driver holds every draw's values: ~100 MB at most

_TOP = {"scenario", "pool", "keep", "select", "grid", "draws", "limits"}
_TABLES = {
    "select": {"models", "chips", "formats", "layouts", "max_replica_chips"},
    "grid": {"batch", "context_tokens"},
    "draws": {"count", "per_partition", "seed", "vary"},
    "limits": {"memory_per_worker_mb"},
}
_AXIS = {"min", "max", "points"}


@dataclass(frozen=True)
class Axis:
    """A log-spaced axis: ``points`` values from ``min`` to ``max`` (whole numbers, duplicates dropped)."""

    min: float
    max: float
    points: int


@dataclass(frozen=True)
class SweepSpec:
    """A checked spec (see the module docstring); ``None`` selections mean every one the database has."""

    path: str
    scenario: str = "base"
    pool: str = "decode"
    keep: tuple[str, ...] = ("frontier", "argmin")
    models: tuple[str, ...] | None = None
    chips: tuple[str, ...] | None = None
    formats: tuple[str, ...] | None = None
    layouts: str = "grid"
    max_replica_chips: int | None = None
    batch: Axis = Axis(1.0, 16384.0, 15)
    context_tokens: Axis = Axis(1024.0, 131072.0, 8)
    draws: int = 1
    draws_per_partition: int = 1
    seed: int = 0
    vary: tuple[str, ...] | None = None
    memory_per_worker_mb: float = 256.0

    def canonical(self) -> dict:
        """What the spec means, without where it was read from (the basis of :meth:`sha256`)."""
        out = asdict(self)
        out.pop("path")
        return out

    def sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.canonical(), sort_keys=True).encode()).hexdigest()


def _line_of(text: str, table: str | None, key: str | None) -> int | None:
    """The line where ``key`` is set in ``[table]`` (or where the table starts), for messages; None if not found."""
    current, table_line = None, None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.split("#", 1)[0].strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.\-]+)\s*\]$", stripped)
        if header:
            current = header.group(1)
            if current == table:
                table_line = number
            continue
        if key is None:
            continue
        dotted = f"{table}.{key}" if table else key
        if (current == table and re.match(rf"^{re.escape(key)}\s*=", stripped)) or (
            current is None and re.match(rf"^{re.escape(dotted)}\s*=", stripped)
        ):
            return number
    return table_line


class _Reader:
    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text

    def fail(self, table: str | None, key: str | None, what: str, fix: str) -> EconError:
        line = _line_of(self.text, table, key)
        where = f"{self.path}:{line}" if line else str(self.path)
        name = ".".join(x for x in (table, key) if x)
        return EconError(f"{where}: {name + ': ' if name else ''}{what}", fix)

    def names(self, table, key, value, *, allowed=None) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.fail(table, key, f"{value!r} is not a list of names", f'write it as {key} = ["a", "b"]')
        if len(set(value)) != len(value):
            raise self.fail(table, key, "names a value twice", "list each one once")
        if allowed is not None:
            bad = [v for v in value if v not in allowed]
            if bad:
                raise self.fail(table, key, f"{bad[0]!r} is not one of {', '.join(allowed)}", "fix or remove it")
        return tuple(value)

    def whole(self, table, key, value, low, high) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.fail(table, key, f"{value!r} is not a whole number from {low:,} to {high:,}", "give one")
        return value

    def number(self, table, key, value, low, high) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise self.fail(table, key, f"{value!r} is not a number from {low:g} to {high:g}", "give one")
        return float(value)

    def table(self, name, value) -> dict:
        if not isinstance(value, dict):
            raise self.fail(None, name, "is not a table", f"write it as a [{name}] section")
        unknown = sorted(set(value) - _TABLES[name])
        if unknown:
            raise self.fail(name, unknown[0], "is not a key econ reads here", f"use {', '.join(sorted(_TABLES[name]))}")
        return value

    def axis(self, key, value, *, low) -> Axis:
        if not isinstance(value, dict) or set(value) != _AXIS:
            raise self.fail(
                "grid", key, f"{value!r} is not an axis", f"write {key} = {{ min = …, max = …, points = … }}"
            )
        lo = self.number("grid", key, value["min"], low, 1e9)
        hi = self.number("grid", key, value["max"], low, 1e9)
        if hi < lo:
            raise self.fail("grid", key, f"max {hi:g} is below min {lo:g}", "swap them")
        points = self.whole("grid", key, value["points"], 1, MAX_GRID_POINTS)
        if points > 1 and hi == lo:
            raise self.fail("grid", key, f"{points} points between equal min and max", "give points = 1")
        return Axis(lo, hi, points)


def read_spec(path: Path) -> SweepSpec:
    """Read and check a sweep spec file: a regular file of at most :data:`MAX_SPEC_BYTES` (a FIFO, a device or a
    runaway file is refused before it is read), UTF-8 TOML nested at most as deep as Python can parse."""
    path = Path(path)
    try:
        raw = read_bounded(
            path,
            max_bytes=MAX_SPEC_BYTES,
            shown=str(path),
            what="a sweep spec",
            hint="check the path (a .toml file)",
        )
    except DataError as e:
        problem = e.problems[0]
        if problem.what == "does not exist":
            raise EconError(f"no sweep spec at {path}", "check the path (a .toml file)") from None
        raise EconError(f"{problem.file}: {problem.what}", problem.hint) from None
    try:
        text = raw.decode("utf-8-sig")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise EconError(f"{path} is not UTF-8 text", "save the spec as UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise EconError(f"{path}: not valid TOML: {e}", "fix the line it names (see toml.io for the syntax)") from None
    except RecursionError:
        raise EconError(
            f"{path}: is nested deeper than econ reads (a sweep spec nests 3 levels: a table, a key, an axis)",
            "is this the right file? see docs/sweeps.md for the spec",
        ) from None
    return parse_spec(data, path=path, text=text)


def parse_spec(data: dict, *, path: Path | str = "<spec>", text: str = "") -> SweepSpec:
    """Check a parsed spec (``tomllib`` output); ``text`` is the file's, to name lines in messages."""
    r = _Reader(Path(path), text)
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise r.fail(None, unknown[0], "is not a key econ reads", f"use {', '.join(sorted(_TOP))}")
    out: dict = {"path": str(path)}
    if "scenario" in data:
        if not isinstance(data["scenario"], str) or not data["scenario"]:
            raise r.fail(None, "scenario", f"{data['scenario']!r} is not a scenario name", 'write scenario = "base"')
        out["scenario"] = data["scenario"]
    if "pool" in data:
        if data["pool"] not in POOLS:
            raise r.fail(None, "pool", f"{data['pool']!r} is not a pool a sweep evaluates", f"use {', '.join(POOLS)}")
        out["pool"] = data["pool"]
    if "keep" in data:
        keep = r.names(None, "keep", data["keep"], allowed=KEEP)
        out["keep"] = tuple(k for k in KEEP if k in keep)
    select = r.table("select", data.get("select", {}))
    for key in ("models", "chips", "formats"):
        if key in select:
            out[key] = r.names("select", key, select[key])
    if "layouts" in select:
        if select["layouts"] not in LAYOUT_SETS:
            raise r.fail(
                "select", "layouts", f"{select['layouts']!r} is not a layout set", f"use {', '.join(LAYOUT_SETS)}"
            )
        out["layouts"] = select["layouts"]
    if "max_replica_chips" in select:
        out["max_replica_chips"] = r.whole("select", "max_replica_chips", select["max_replica_chips"], 1, 1 << 20)
    grid = r.table("grid", data.get("grid", {}))
    if "batch" in grid:
        out["batch"] = r.axis("batch", grid["batch"], low=1.0)
    if "context_tokens" in grid:
        out["context_tokens"] = r.axis("context_tokens", grid["context_tokens"], low=1.0)
    draws = r.table("draws", data.get("draws", {}))
    if "count" in draws:
        out["draws"] = r.whole("draws", "count", draws["count"], 1, MAX_DRAWS)
    if "per_partition" in draws:
        out["draws_per_partition"] = r.whole("draws", "per_partition", draws["per_partition"], 1, MAX_DRAWS)
    if "seed" in draws:
        out["seed"] = r.whole("draws", "seed", draws["seed"], 0, 2**63 - 1)
    if "vary" in draws:
        out["vary"] = tuple(sorted(r.names("draws", "vary", draws["vary"], allowed=VARIABLE)))
    limits = r.table("limits", data.get("limits", {}))
    if "memory_per_worker_mb" in limits:
        out["memory_per_worker_mb"] = r.number(
            "limits", "memory_per_worker_mb", limits["memory_per_worker_mb"], 16, 1e6
        )
    return SweepSpec(**out)
