"""Drawing a long command's progress (``econ.progress`` steps) on stderr: a bar on a terminal, plain lines when piped.

On a terminal one tqdm line shows the stage, the item it is on, items done of the stage's total, the time elapsed
and tqdm's estimate of the time left; it is drawn as soon as the command starts (before the heavy imports) and
cleared at the end. Piped (a log, CI), each stage gets one line when it ends: what it did, how many items and how
long. ``--quiet`` draws nothing, nor does ``ECON_PROGRESS=off`` (``lines`` forces the plain lines, ``bar`` the bar;
the default ``auto`` picks by the stream). The times of the items are kept, so the closing summary can name the
slowest.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from econ.errors import EconError

STAGE_WORDS = {
    "load": "checked and loaded the data",
    "import": "read the snapshot",
    "analyses": "ran the analyses",
    "views": "wrote the catalog and the views",
    "report": "drew the report",
    "commit": "moved the new outputs into place",
}


class Progress:
    """A :data:`econ.progress.Reporter` for ``command``; call :meth:`close` when the command ends."""

    def __init__(self, command: str, *, quiet: bool = False, stream: TextIO | None = None):
        mode = os.environ.get("ECON_PROGRESS", "auto")
        if mode not in ("auto", "bar", "lines", "off"):
            raise EconError(f"ECON_PROGRESS={mode!r} is not auto, bar, lines or off", "unset it, or set one of those")
        self.command, self.quiet = command, quiet or mode == "off"
        self.stream = stream or sys.stderr
        self.tty = not self.quiet and (mode == "bar" or (mode == "auto" and self.stream.isatty()))
        self.started = time.perf_counter()
        self.stage: str | None = None
        self.stage_started = self.started
        self.stage_total = 0
        self.item: tuple[str, str, float] | None = None  # (stage, item, started)
        self.seconds: dict[tuple[str, str], float] = {}
        self.took_s: dict[tuple[str, str], float] = {}  # stated by econ.progress.took: overrides ``seconds``
        self.bar = None
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(
                total=1,
                file=self.stream,
                leave=False,
                dynamic_ncols=True,
                bar_format="{desc} {bar:20} {n_fmt}/{total_fmt} [{elapsed}<{remaining}]",
                desc=f"{command}: starting",
            )

    def __call__(self, stage: str, item: str, done: int, total: int) -> None:
        now = time.perf_counter()
        self._finish_item(now)
        if self.bar is not None:
            self.bar.set_description_str(f"{self.command}: {stage} {item}", refresh=False)
        if stage != self.stage:
            self._end_stage(now)
            self.stage, self.stage_started, self.stage_total = stage, now, total
            if self.bar is not None:
                self.bar.reset(total=max(total, 1))
        self.stage_total = max(total, self.stage_total)
        self.item = (stage, item, now)
        if self.bar is not None:
            self.bar.n = done
            self.bar.refresh()

    def took(self, stage: str, item: str, seconds: float) -> None:
        """Record how long an item took where items overlap (:func:`econ.progress.took`)."""
        self.took_s[(stage, item)] = seconds

    def _finish_item(self, now: float) -> None:
        if self.item is not None:
            stage, item, started = self.item
            self.seconds[(stage, item)] = now - started
            self.item = None

    def _end_stage(self, now: float) -> None:
        if self.stage is None or self.tty or self.quiet:
            return
        words = STAGE_WORDS.get(self.stage, self.stage)
        count = f" ({self.stage_total} {'item' if self.stage_total == 1 else 'items'})" if self.stage_total > 1 else ""
        self.stream.write(f"{self.command}: {words}{count} in {now - self.stage_started:.1f} s\n")
        self.stream.flush()

    def slowest(self, stage: str, n: int = 3) -> list[tuple[str, float]]:
        """The ``n`` slowest items of ``stage`` with their seconds."""
        items = [(item, s) for (st, item), s in (self.seconds | self.took_s).items() if st == stage]
        return sorted(items, key=lambda kv: -kv[1])[:n]

    def close(self) -> None:
        """End the bar; piped, say how the last stage ended (closed in a ``finally`` while an error propagates, it
        stopped: it did not finish)."""
        now = time.perf_counter()
        item = self.item[1] if self.item is not None else None
        self._finish_item(now)
        if sys.exc_info()[0] is not None and self.stage is not None:
            if not (self.tty or self.quiet):
                at = f" ({item})" if item else ""
                self.stream.write(
                    f"{self.command}: stopped during {self.stage}{at} after {now - self.stage_started:.1f} s\n"
                )
                self.stream.flush()
            self.stage = None
        self._end_stage(now)
        self.stage = None
        if self.bar is not None:
            self.bar.close()
            self.bar = None
