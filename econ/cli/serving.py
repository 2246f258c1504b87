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


def cmd_predict(args) -> int:
    import json

    from econ.analyses.predict_command import predict_point, rows

    result = predict_point(
        args.db,
        model=args.model,
        chip=args.chip,
        decode_chips=args.decode_chips,
        prefill_chips=args.prefill_chips,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        batch=args.batch,
        tokens_per_s_per_user=args.tokens_per_s_per_user,
        number_format=args.number_format,
        cached_input_frac=args.cached_input_frac,
        scenario=args.scenario,
    )
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


# ---------------------------------------------------------------------------- parser
