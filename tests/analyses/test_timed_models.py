"""Which models the serving model can time: every model of the shipped data is timed or says why not, and the
commands that time a model (``econ predict``, ``econ fleet``) refuse the others with that reason."""

from __future__ import annotations

import duckdb
import pytest

from econ.analyses.timed_models import MODELS_SQL, UNTIMED_SQL, refuse_untimed
from econ.cli import main
from econ.errors import EconError


def test_every_model_is_timed_or_says_why_not(real_db):
    """The two sets split data/models.csv; the untimed ones are DeepSeek-V4's, whose attention ('other' in
    data/models.csv: neither MLA nor GQA) econ does not model."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        timed = {r[0] for r in con.execute(MODELS_SQL).fetchall()}
        untimed = dict(con.execute(f"select model, why from ({UNTIMED_SQL})").fetchall())
        every = {r[0] for r in con.execute("select model from models").fetchall()}
        other = {r[0] for r in con.execute("select model from models where attention = 'other'").fetchall()}
        assert not timed & set(untimed) and timed | set(untimed) == every
        assert set(untimed) == other == {"DeepSeek-V4-Pro", "DeepSeek-V4-Flash"}
        assert untimed["DeepSeek-V4-Pro"] == "its attention ('other') has no modelled KV cache"
        refuse_untimed(con, "Llama-3.1-70B")  # timed: nothing to say
        with pytest.raises(EconError, match=r"^econ cannot time DeepSeek-V4-Flash: its attention \('other'\)"):
            refuse_untimed(con, "DeepSeek-V4-Flash")


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "--input-tokens", "1000", "--output-tokens", "100", "--concurrency", "8"],
        ["fleet", "--tokens-per-s", "1e6"],
    ],
)
def test_a_command_that_times_a_model_refuses_an_untimed_one_with_why(real_db, capsys, args):
    """econ fleet said 'nothing fits ... give more chips per replica', and econ predict 'no modelled cache', for a model
    no chip count would let econ time."""
    code = main([args[0], "--db", str(real_db), "--model", "DeepSeek-V4-Pro", "--chip", "GB200", *args[1:]])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith(
        "Error: econ cannot time DeepSeek-V4-Pro: its attention ('other') has no modelled KV cache — pick a model "
        "whose KV cache econ models"
    )
