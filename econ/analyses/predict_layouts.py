"""The layouts ``econ predict`` considers for a pool: the one stated, a named one (``data/layouts.csv``), or every
layout the search allows where a degree is left out.

A pool's layout is ``chips = TP × DP × PP`` per worker, the routed experts over each stage's ``TP × DP`` chips as
``ETP`` slices × ``EP`` ranks, and a count of workers. Any replica size is allowed (144, 72, 48, not only powers of
two): the search takes the tensor-parallel degrees that divide both the size and the model's attention heads,
pipeline stages that divide what is left (at most :data:`MAX_STAGES`), and for a MoE model experts either spread
over the stage (EP) or split across it (ETP). Without a size it tries :data:`SIZES` and multiples of the chip's
scale-up domain, up to the scenario's ``max_replica_chips``.
"""

from __future__ import annotations

from dataclasses import dataclass

from econ.errors import EconError

SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
MAX_STAGES = 8


@dataclass(frozen=True)
class PoolSpec:
    """What the user stated about a pool (None: left to the search)."""

    chips: int | None = None
    tensor_parallel: int | None = None
    data_parallel: int | None = None
    pipeline_parallel: int | None = None
    expert_parallel: int | None = None
    expert_tensor_parallel: int | None = None
    workers: int | None = None
    layout: str | None = None

    def degrees(self) -> tuple[tuple[str, int | None], ...]:
        """(flag suffix, stated value or None) of each layout degree."""
        return (
            ("chips", self.chips),
            ("tp", self.tensor_parallel),
            ("dp", self.data_parallel),
            ("pp", self.pipeline_parallel),
            ("ep", self.expert_parallel),
            ("etp", self.expert_tensor_parallel),
        )

    @property
    def stated(self) -> bool:
        return any(
            v is not None
            for v in (
                self.chips,
                self.tensor_parallel,
                self.data_parallel,
                self.pipeline_parallel,
                self.expert_parallel,
                self.expert_tensor_parallel,
                self.layout,
            )
        )


@dataclass(frozen=True)
class Layout:
    tensor_parallel: int
    data_parallel: int
    pipeline_parallel: int
    expert_tensor_parallel: int
    replicate: bool = True
    redundant_expert_slots: int = 0
    overlap_comm: bool = False
    how: str = "stated"

    @property
    def chips(self) -> int:
        return self.tensor_parallel * self.data_parallel * self.pipeline_parallel

    @property
    def expert_parallel(self) -> int:
        return max(self.tensor_parallel * self.data_parallel // self.expert_tensor_parallel, 1)

    def text(self, moe: bool = True) -> str:
        """``tp 4 x dp 1 x pp 1 (4 chips)``, and the expert degrees for a MoE model (a dense one has no experts)."""
        chips = f"{self.chips} chip{'s' if self.chips != 1 else ''}"
        dense = f"tp {self.tensor_parallel} x dp {self.data_parallel} x pp {self.pipeline_parallel} ({chips})"
        return f"{dense}, ep {self.expert_parallel} etp {self.expert_tensor_parallel}" if moe else dense


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def named(layouts, name: str, pool: str, domain: int, moe: bool, max_chips: int) -> Layout:
    """A layout of ``data/layouts.csv`` for ``pool`` (a blank replica is one scale-up domain)."""
    rows = [r for r in layouts.iter_rows(named=True) if r["layout"] == name]
    if not rows:
        known = ", ".join(sorted(r["layout"] for r in layouts.iter_rows(named=True)))
        raise EconError(f"no layout {name!r} in data/layouts.csv", f"known layouts: {known}")
    r = rows[0]
    if r["pool"] != pool:
        raise EconError(f"layout {name!r} is a {r['pool']} layout", f"give it as --{r['pool']}-layout")
    if r["applies_to"] == "moe" and not moe:
        raise EconError(f"layout {name!r} is for MoE models", "pick a layout that applies to this model")
    chips = int(r["replica_chips"] or min(domain, max_chips))
    tp, pp = int(r["tensor_parallel"]), int(r["pipeline_parallel"])
    if chips % (tp * pp):
        raise EconError(
            f"layout {name!r}: {chips} chips is not a multiple of tp {tp} x pp {pp}", "fix data/layouts.csv"
        )
    return Layout(
        tp,
        chips // (tp * pp),
        pp,
        1,
        replicate=bool(r["replicate_attention"]),
        redundant_expert_slots=int(r["redundant_expert_slots"] or 0),
        overlap_comm=bool(r.get("overlap_comm") or 0),
        how=f"named layout {name}",
    )


def candidates(spec: PoolSpec, *, heads: int, layers: int, moe: bool, domain: int, max_chips: int) -> list[Layout]:
    """Every layout consistent with what ``spec`` states (a stated degree is kept, an omitted one searched)."""
    if spec.chips is not None:
        sizes = [spec.chips]
    elif spec.tensor_parallel is not None and spec.data_parallel is not None:  # the degrees set the size
        stages = [spec.pipeline_parallel] if spec.pipeline_parallel else range(1, MAX_STAGES + 1)
        sizes = sorted({spec.tensor_parallel * spec.data_parallel * pp for pp in stages} - {0})
        sizes = [s for s in sizes if s <= max_chips]
    else:
        sizes = sorted(
            {s for s in SIZES if s <= max_chips} | {domain * k for k in (1, 2, 4) if domain * k <= max_chips}
        )
    out = []
    stated = dict(spec.degrees())
    searched = [d for d in ("chips", "tp", "dp", "pp") if stated[d] is None]
    if not {"tp", "dp", "pp"} & set(searched):  # tp, dp and pp fix the layout and its chips
        searched = []
    for chips in sizes:
        for tp in [spec.tensor_parallel] if spec.tensor_parallel else _divisors(chips):
            if chips % tp or (heads and heads % tp):
                continue
            for pp in [spec.pipeline_parallel] if spec.pipeline_parallel else _divisors(chips // tp):
                if (chips // tp) % pp or pp > MAX_STAGES or pp > layers:
                    continue
                dp = chips // (tp * pp)
                if spec.data_parallel is not None and dp != spec.data_parallel:
                    continue
                stage = tp * dp
                if not moe:
                    etps = [1]
                elif spec.expert_tensor_parallel is not None:
                    etps = [spec.expert_tensor_parallel]
                elif spec.expert_parallel is not None:
                    etps = [stage // spec.expert_parallel] if stage % spec.expert_parallel == 0 else []
                else:  # experts spread over the stage, or split within a node (engines split at most 8 ways)
                    etps = sorted({1} | ({stage} if stage <= min(domain, 8) else set()))
                for etp in etps:
                    if etp < 1 or stage % etp:
                        continue
                    chosen = [*searched, "ep"] if len(etps) > 1 else searched  # the search split the experts
                    how = f"layout search ({', '.join(chosen)})" if chosen else "stated"
                    out.append(Layout(tp, dp, pp, etp, how=how))
    return out


def contradictions(spec: PoolSpec, layout: Layout) -> list[str]:
    """The stated degrees ``layout`` does not have, as ``"tp 4 (it has 8)"`` (empty: it honours them all)."""
    has = {
        "chips": layout.chips,
        "tp": layout.tensor_parallel,
        "dp": layout.data_parallel,
        "pp": layout.pipeline_parallel,
        "ep": layout.expert_parallel,
        "etp": layout.expert_tensor_parallel,
    }
    return [f"{name} {want:g} (it has {has[name]})" for name, want in spec.degrees() if want not in (None, has[name])]


def pool_layouts(
    spec: PoolSpec, pool: str, layouts, *, heads: int, layers: int, moe: bool, domain: int, max_chips: int
):
    """The layouts a pool may take: the named one, else every searched layout with each stated degree. A stated
    degree is honoured or refused, never replaced: a named layout beside degrees it does not have, expert degrees
    for a dense model, or degrees no layout has together are errors saying why."""
    if spec.layout is not None:
        found = named(layouts, spec.layout, pool, domain, moe, max_chips)
        bad = contradictions(spec, found)
        if bad:
            raise EconError(
                f"--{pool}-layout {spec.layout} sets {found.text(moe)}, not the stated " + ", ".join(bad),
                f"leave out the {pool} degrees (the named layout sets them; --{pool}-workers may be given) or the "
                "layout",
            )
        return [found]
    if not moe:
        for name, value in (("ep", spec.expert_parallel), ("etp", spec.expert_tensor_parallel)):
            if value is not None and value != 1:
                raise EconError(
                    f"--{pool}-{name} {value:g}: the model is dense, it has no routed experts to spread or split",
                    f"leave out --{pool}-{name} (only MoE models take expert parallel degrees)",
                )
    found = [
        lay
        for lay in candidates(spec, heads=heads, layers=layers, moe=moe, domain=domain, max_chips=max_chips)
        if not contradictions(spec, lay)
    ]
    if not found:
        stated = ", ".join(f"{n} {v:g}" for n, v in spec.degrees() if v is not None)
        raise EconError(
            f"no {pool} layout has {stated}: chips = tp x dp x pp, tp divides the model's {heads} attention heads "
            f"and the chips, pp is at most {min(MAX_STAGES, layers)}, and ep x etp = tp x dp",
            f"change the --{pool}-* degrees, or leave some out to let the layout search choose",
        )
    return found


def check_spec(spec: PoolSpec, flag: str, ceiling: float) -> None:
    """Every stated degree a whole number from 1 to the chips ceiling; chips consistent with the degrees."""
    for name, value in (*spec.degrees(), ("workers", spec.workers)):
        if value is not None and not 1 <= value <= ceiling:
            raise EconError(
                f"--{flag}-{name} must be a whole number from 1 to {ceiling:g} (got {value:g})",
                f"give the {flag} pool's {name}, or leave it out to let the layout search choose",
            )
    degrees = [v for v in (spec.tensor_parallel, spec.data_parallel, spec.pipeline_parallel) if v is not None]
    if spec.chips is not None and len(degrees) == 3 and degrees[0] * degrees[1] * degrees[2] != spec.chips:
        raise EconError(
            f"--{flag}-chips {spec.chips} is not tp x dp x pp = {degrees[0] * degrees[1] * degrees[2]}",
            "give consistent degrees, or leave one out to let the layout search fill it in",
        )
