"""``econ fleet`` and ``econ predict``: a fleet plan and one operating point, printed."""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

from econ.cli.common import _date, _out, _whole
from econ.cli.help import BUILD_DATE, subparser
from econ.engines import ENGINES, engine_name
from econ.output import FORMATS, human, render, render_fit, render_object, terminal_width


def cmd_fleet(args) -> int:
    from econ.analyses.fleet_command import plan_for

    result = plan_for(
        args.db,
        model=args.model,
        chip=args.chip,
        tokens_per_s=args.tokens_per_s,
        scenario=args.scenario,
        batch_policy=args.batch_policy,
        number_format=args.number_format,
        prefill_chips=args.prefill_chips,
        decode_chips=args.decode_chips,
        tokens_per_s_per_user=args.tokens_per_s_per_user,
        ttft_s=args.ttft_s,
        as_of=args.as_of,
        decode_layout=args.decode_layout,
        prefill_layout=args.prefill_layout,
        input_tokens=args.input_tokens,
        input_tokens_mix=args.input_tokens_mix,
        output_tokens=args.output_tokens,
        output_tokens_mix=args.output_tokens_mix,
        cached_input_frac=args.cached_input_frac,
        speculative_tokens=args.speculative_tokens,
        acceptance_frac=args.acceptance,
        kv_cache_format=args.kv_cache_format,
        usd_per_chip_hour=args.usd_per_chip_hour,
        decode_degrees=_degrees(args, "decode"),
        prefill_degrees=_degrees(args, "prefill"),
        engine=args.engine,
        expert_balanced=args.expert_balanced,
    )
    if args.format == "json":
        _out(render_object(result.as_object()))
    elif args.format == "csv":
        _out(render(["quantity", "value", "unit"], result.rows(), fmt="csv"))
    elif args.format == "markdown":
        _out(render(["quantity", "value"], result.human_rows(), fmt="markdown"))
    else:  # the notes wrap in the value column, within the terminal's width
        rows = result.human_rows()
        _out(render_fit(["quantity", "value"], rows, width=terminal_width(), flexible="value", wrap=True, count=False))
    return 0


def _mix(text: str) -> tuple[tuple[float, float], ...]:
    """``1000:0.6,8000:0.4`` as ((1000.0, 0.6), (8000.0, 0.4)); the command checks the values."""
    pairs = []
    for part in text.split(","):
        tokens, sep, share = part.strip().partition(":")
        try:
            if not sep:
                raise ValueError
            pairs.append((float(tokens), float(share)))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{part.strip()!r} is not TOKENS:SHARE (write the mix as 1000:0.6,8000:0.4)"
            ) from None
    return tuple(pairs)


def _degrees(args, pool: str):
    """A pool's stated degrees (econ fleet takes its replica size and named layout as flags of their own)."""
    from econ.analyses.predict_layouts import PoolSpec

    return PoolSpec(
        tensor_parallel=getattr(args, f"{pool}_tp"),
        data_parallel=getattr(args, f"{pool}_dp"),
        pipeline_parallel=getattr(args, f"{pool}_pp"),
        expert_parallel=getattr(args, f"{pool}_ep"),
        expert_tensor_parallel=getattr(args, f"{pool}_etp"),
    )


def _pool(args, pool: str):
    """A pool as econ predict takes it: its degrees, replica size, workers and named layout."""
    return dataclasses.replace(
        _degrees(args, pool),
        chips=getattr(args, f"{pool}_chips"),
        workers=getattr(args, f"{pool}_workers"),
        layout=getattr(args, f"{pool}_layout"),
    )


def cmd_predict(args) -> int:
    import json

    if args.points is not None:
        _only_the_file(args)
        return _predict_points(args)
    from econ.analyses.predict_command import Point, predict_point
    from econ.analyses.predict_result import rows
    from econ.errors import EconError

    missing = [
        f
        for f, v in (
            ("--model", args.model),
            ("--chip", args.chip),
            ("--input-tokens", args.input_tokens),
            ("--output-tokens", args.output_tokens),
        )
        if v is None
    ]
    if missing:
        raise EconError(
            f"econ predict needs {', '.join(missing)}", "or give --points FILE.csv to predict a file of runs"
        )
    point = Point(
        model=args.model,
        chip=args.chip,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        mode=args.mode,
        engine=args.engine,
        decode=_pool(args, "decode"),
        prefill=_pool(args, "prefill"),
        concurrency=args.concurrency,
        batch=args.batch,
        tokens_per_s_per_user=args.tokens_per_s_per_user,
        ttft_s=args.ttft_s,
        cached_input_frac=args.cached_input_frac,
        weight_format=args.weight_format or args.number_format,
        expert_format=args.expert_format,
        kv_cache_format=args.kv_cache_format,
        speculative_tokens=args.speculative_tokens,
        acceptance_frac=args.acceptance,
        expert_balanced=args.expert_balanced,
        scenario=args.scenario,
    )
    result = predict_point(args.db, point)
    if args.format == "json":
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in result.items()}
        _out(json.dumps(clean, indent=2))
    elif args.format == "csv":
        columns, table = rows(result)
        _out(render(columns, table, fmt="csv"))
    else:  # for people: 15.7 ms, 1.53 k tokens/s (csv and json keep the base units)
        _, table = rows(result)
        _out(render(["quantity", "value"], [(q, human(v, u)) for q, v, u in table], fmt=args.format))
    return 0


def _predict_points(args) -> int:
    import sys

    from econ.analyses.predict_points import describe, predict_points_file

    frame = predict_points_file(args.db, args.points)
    fmt = "csv" if args.format == "table" else args.format
    if fmt == "json":
        import json

        records = [
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in frame.iter_rows(named=True)
        ]
        _out(json.dumps(records, indent=1))
    else:
        _out(render(frame.columns, frame.rows(), fmt=fmt))
    sys.stderr.write(describe(frame) + "\n")
    return 0


# ---------------------------------------------------------------------------- parser


def _only_the_file(args) -> None:
    """--points reads every setting from its file: a single point's flag beside it would be ignored, so it is an
    error naming the flags (the defaults are the parser's, so an unset flag is never named)."""
    from econ.cli import parser
    from econ.errors import EconError

    defaults = vars(parser().parse_args(["predict", "--points", str(args.points)]))
    given = sorted(
        f"--{k.replace('_', '-')}"
        for k, v in vars(args).items()
        if k not in ("db", "points", "format", "func", "command") and k in defaults and v != defaults[k]
    )
    if given:
        raise EconError(
            f"econ predict --points reads every setting from its file; {', '.join(given)} would be ignored",
            "drop them, or predict one point without --points",
        )


def add_fleet(sub, add_db) -> None:
    """``econ fleet``'s arguments (``add_db`` adds the shared --db)."""
    fl = subparser(
        sub, "fleet", help="size, power and cost the fleet serving a model on a chip at a traffic (read-only)"
    )
    add_db(fl)
    fl.add_argument(
        "--model",
        required=True,
        help="model with an architecture: models.model, its canonical name, repo or a price key, in any case",
    )
    fl.add_argument("--chip", required=True, help="accelerator (hardware.chip, in any case)")
    fl.add_argument(
        "--tokens-per-s", type=float, required=True, help="traffic served, input + output tokens per second"
    )
    fl.add_argument(
        "--scenario",
        default="calibrated",
        help="scenario of the traffic mix and fleet assumptions: calibrated (efficiencies fitted to measured "
        "systems, the default) or base (the roofline bound), or another of data/scenarios.csv",
    )
    fl.add_argument(
        "--batch-policy",
        choices=("balance_multiple", "speed_target"),
        default="balance_multiple",
        help="decode batch: a multiple of the balance batch (balance_multiple, the default), or the largest meeting "
        "the speed target",
    )
    fl.add_argument(
        "--number-format",
        choices=("bf16", "fp8", "int8", "fp4"),
        default=None,
        help="format of the math and weights (default: the scenario's weight_format)",
    )
    fl.add_argument(
        "--decode-chips",
        type=_whole,
        default=None,
        help="chips per decode replica (default: the layout search chooses)",
    )
    fl.add_argument(
        "--prefill-chips",
        type=_whole,
        default=None,
        help="chips per prefill replica (default: the layout search chooses)",
    )
    fl.add_argument(
        "--tokens-per-s-per-user",
        type=float,
        default=None,
        help="decode speed each user must see (default: the scenario's; implies --batch-policy speed_target)",
    )
    fl.add_argument(
        "--ttft-s", type=float, default=None, help="time to first token each prompt must meet (default: the scenario's)"
    )
    fl.add_argument("--decode-layout", default=None, help="a named decode layout of data/layouts.csv")
    fl.add_argument("--prefill-layout", default=None, help="a named prefill layout of data/layouts.csv")
    _degree_flags(fl, "of a replica; the layout search picks only among layouts with the degrees given")
    fl.add_argument(
        "--input-tokens", type=float, default=None, help="prompt tokens per request (default: the scenario's mix)"
    )
    fl.add_argument(
        "--input-tokens-mix",
        type=_mix,
        default=None,
        help="a distribution of prompt lengths instead: TOKENS:SHARE pairs, such as 1000:0.6,8000:0.3,32000:0.1 "
        "(the shares add up to 1)",
    )
    fl.add_argument(
        "--output-tokens", type=float, default=None, help="output tokens per request (with --input-tokens or the mix)"
    )
    fl.add_argument(
        "--output-tokens-mix",
        type=_mix,
        default=None,
        help="a distribution of output lengths instead: TOKENS:SHARE pairs, such as 200:0.5,2000:0.4,16000:0.1 "
        "(the shares add up to 1; a decode batch holds each request for its own output's steps)",
    )
    fl.add_argument("--cached-input-frac", type=float, default=None, help="share of prompt tokens served from cache")
    fl.add_argument("--speculative-tokens", type=_whole, default=None, help="MTP / draft tokens per decode step")
    fl.add_argument("--acceptance", type=float, default=None, help="share of draft tokens accepted")
    fl.add_argument(
        "--expert-balanced",
        action="store_true",
        help="routed experts placed by a load balancer from routing statistics (EPLB; a named layout with redundant "
        "expert slots implies it): the busiest expert rank is uniform routing's, not the fitted router skew",
    )
    fl.add_argument("--kv-cache-format", choices=("bf16", "fp8"), default=None, help="KV-cache format")
    fl.add_argument("--usd-per-chip-hour", type=float, default=None, help="the scenario's chip price")
    fl.add_argument(
        "--engine",
        type=engine_name,
        choices=ENGINES,
        default=None,
        help="engine whose calibrated values to plan with (default: the engine average)",
    )
    fl.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    fl.add_argument(
        "--as-of",
        type=_date,
        default=None,
        help=f"date for current list prices and rental quotes (default: {BUILD_DATE})",
    )
    fl.set_defaults(func=cmd_fleet)


def _degree_flags(parser, unit: str) -> None:
    """The degrees of each pool's layout, as econ predict and econ fleet both take them."""
    for pool in ("decode", "prefill"):
        parser.add_argument(f"--{pool}-tp", type=_whole, default=None, help=f"{pool} tensor-parallel degree {unit}")
        parser.add_argument(f"--{pool}-dp", type=_whole, default=None, help=f"{pool} attention data-parallel ranks")
        parser.add_argument(f"--{pool}-pp", type=_whole, default=None, help=f"{pool} pipeline stages")
        parser.add_argument(f"--{pool}-ep", type=_whole, default=None, help=f"{pool} expert-parallel ranks")
        parser.add_argument(
            f"--{pool}-etp", type=_whole, default=None, help=f"{pool} tensor-parallel slices per expert"
        )


def add_predict(sub, add_db) -> None:
    """``econ predict``'s arguments (``add_db`` adds the shared --db)."""
    pr = subparser(
        sub,
        "predict",
        help="predict a serving configuration (TTFT, TPOT, throughput, cost, error factors), or a file of runs "
        "(read-only)",
        description="Predict one serving configuration: a model on a chip, aggregated or disaggregated, each "
        "pool's layout (a degree left out is chosen by the layout search, which says so), the concurrency or "
        "batch or speed target, lengths, formats, MTP and engine. With --points FILE.csv, every row of a file in "
        "the InferenceX / AIConfigurator schema of data/inferencex_train.csv (csv or json out).",
    )
    add_db(pr)
    pr.add_argument("--points", type=Path, default=None, help="a CSV of runs in data/inferencex_train.csv's columns")
    pr.add_argument("--model", help="model (models.model or a Hugging Face id)")
    pr.add_argument("--chip", help="accelerator (hardware.chip, or a system name such as h200_sxm)")
    pr.add_argument("--input-tokens", type=float, help="prompt tokens per request")
    pr.add_argument("--output-tokens", type=float, help="output tokens per request")
    pr.add_argument(
        "--mode",
        choices=("agg", "disagg"),
        default="disagg",
        help="agg: one pool does prefill and decode; disagg: separate pools (default)",
    )
    pr.add_argument(
        "--engine",
        type=engine_name,
        choices=ENGINES,
        default=None,
        help="engine whose calibrated values to use (default: the engine average)",
    )
    for pool in ("decode", "prefill"):
        pr.add_argument(f"--{pool}-chips", type=_whole, default=None, help=f"chips per {pool} worker (any size)")
        pr.add_argument(f"--{pool}-workers", type=_whole, default=None, help=f"{pool} workers")
        pr.add_argument(f"--{pool}-layout", default=None, help=f"a named {pool} layout of data/layouts.csv")
    _degree_flags(pr, "of a worker")
    load = pr.add_mutually_exclusive_group()
    load.add_argument("--concurrency", type=float, help="requests in flight (the whole system)")
    load.add_argument("--batch", type=float, help="sequences per decode worker")
    load.add_argument("--tokens-per-s-per-user", type=float, help="decode speed each user must see (largest load)")
    pr.add_argument("--ttft-s", type=float, default=None, help="TTFT target for the prefill pool (default: scenario)")
    pr.add_argument("--cached-input-frac", type=float, default=0.0, help="share of each prompt already cached")
    formats = ("bf16", "fp8", "int8", "fp4")
    pr.add_argument("--weight-format", choices=formats, default=None, help="weights and matmul format")
    pr.add_argument("--number-format", choices=formats, default=None, help=argparse.SUPPRESS)
    pr.add_argument("--expert-format", choices=formats, default=None, help="routed experts' format (default: weights)")
    pr.add_argument("--kv-cache-format", choices=("bf16", "fp8"), default=None, help="KV-cache format")
    pr.add_argument("--speculative-tokens", type=_whole, default=0, help="MTP / draft tokens verified per step")
    pr.add_argument("--acceptance", type=float, default=None, help="share of draft tokens accepted (0-1)")
    pr.add_argument(
        "--expert-balanced",
        action="store_true",
        help="routed experts placed by a load balancer from routing statistics (EPLB; a named layout with redundant "
        "expert slots implies it): the busiest expert rank is uniform routing's, not the fitted router skew",
    )
    pr.add_argument(
        "--scenario",
        default="calibrated",
        help="scenario: calibrated (fitted to measured systems, the default) or base (the roofline bound)",
    )
    pr.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    pr.set_defaults(func=cmd_predict)
