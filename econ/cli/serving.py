"""``econ fleet`` and ``econ predict``: a fleet plan and one operating point, printed."""

from __future__ import annotations

import math

from econ.cli.common import _out
from econ.output import human, render, render_fit, render_object, terminal_width


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
        output_tokens=args.output_tokens,
        cached_input_frac=args.cached_input_frac,
        speculative_tokens=args.speculative_tokens,
        acceptance_frac=args.acceptance,
        kv_cache_format=args.kv_cache_format,
        usd_per_chip_hour=args.usd_per_chip_hour,
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


def _pool(args, pool: str):
    from econ.analyses.predict_layouts import PoolSpec

    return PoolSpec(
        chips=getattr(args, f"{pool}_chips"),
        tensor_parallel=getattr(args, f"{pool}_tp"),
        data_parallel=getattr(args, f"{pool}_dp"),
        pipeline_parallel=getattr(args, f"{pool}_pp"),
        expert_parallel=getattr(args, f"{pool}_ep"),
        expert_tensor_parallel=getattr(args, f"{pool}_etp"),
        workers=getattr(args, f"{pool}_workers"),
        layout=getattr(args, f"{pool}_layout"),
    )


def cmd_predict(args) -> int:
    import json

    if args.points is not None:
        return _predict_points(args)
    from econ.analyses.predict_command import Point, predict_point, rows
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
