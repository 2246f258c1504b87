"""Errors for people.

Library code raises an :class:`EconError` subclass; only ``econ/cli.py`` turns it into
``Error: …`` on stderr and exit code 1 (no traceback for a user mistake).
"""

from __future__ import annotations

from dataclasses import dataclass


class EconError(Exception):
    """A problem the user can fix; ``str()`` is the whole message, hint included."""

    def __init__(self, message: str, hint: str | None = None):
        self.message = message
        self.hint = hint
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


SHOWN_PROBLEMS = 50
"""How many problems a :class:`DataError` message lists (the rest are counted)."""


class EconNotice(UserWarning):
    """Something the user should know that does not stop the run (a cache entry that failed its check and was
    recomputed, a cache folder that cannot be written, a diff between dates without snapshots).

    Library code issues it with :func:`warnings.warn`; the CLI prints it as one ``notice: …`` line on stderr.
    """


@dataclass(frozen=True)
class Problem:
    """One bad value: where it is, what it is and what was expected.

    Rendered as ``data/prices.csv:17: column output_usd_per_mtok: "1O.0" is not a number — hint``.
    ``line`` is the 1-based physical line in the file (the header is line 1); ``None`` means the
    problem is about the whole file.
    """

    file: str
    line: int | None
    column: str | None
    what: str
    hint: str | None = None

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line is not None else self.file
        col = f" column {self.column}:" if self.column else ""
        text = f"{place}:{col} {self.what}"
        return f"{text} — {self.hint}" if self.hint else text


class DataError(EconError):
    """One or more bad input values; every bad row is kept in ``problems``.

    The message lists the first :data:`SHOWN_PROBLEMS` and counts the rest, so a file with 200,000 bad
    cells gives a screenful, not megabytes.
    """

    def __init__(self, problems: list[Problem]):
        if not problems:
            raise ValueError("DataError needs at least one problem")
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.column or ""))
        super().__init__(self._render())

    def _render(self) -> str:
        lines = [str(p) for p in self.problems[:SHOWN_PROBLEMS]]
        if len(self.problems) == 1:
            return lines[0]
        rest = len(self.problems) - len(lines)
        more = [f"… and {rest:,} more (fix these and run again to see the rest)"] if rest else []
        return f"{len(self.problems):,} problems in the input data:\n" + "\n".join(lines + more)

    def __str__(self) -> str:
        return self._render()


class FitError(EconError):
    """A fit cannot be set up (wrong shapes, no data); an unidentified fit is a status, not this."""


class ReportError(EconError):
    """The report could not be written."""
