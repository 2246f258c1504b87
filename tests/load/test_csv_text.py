"""A data file's CSV records: the quote-free fast path reads what csv.reader reads."""

from __future__ import annotations

import random

from econ.load.csv_text import _csv_rows, _plain_rows


def test_plain_files_read_as_the_csv_module_reads_them():
    """A file without quotes is split by hand (faster); on random text of commas, blanks, line breaks and letters it
    gives the header, rows and lines csv.reader gives, and it leaves every other file to csv.reader."""
    rng = random.Random(22)
    alphabet = ["a", "b", ",", ",", " ", "\t", "\n", "\n", "\u2028", "\x0c", "é"]
    plain = 0
    for _ in range(2000):
        text = "h," + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        got = _plain_rows(text)
        if got is not None:
            plain += 1
            assert got == _csv_rows(text, "f.csv"), repr(text)
    assert plain > 1900
    assert _plain_rows('h\n"a,b"\n') is None and _plain_rows("h\r\na\r\n") is None and _plain_rows("\nh\n") is None
