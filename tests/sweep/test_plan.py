"""A sweep's plan: each partition's run settings are the scenario's, case by case."""

from __future__ import annotations

import numpy as np
import pytest

from econ.sweep.run import load_plan
from econ.sweep.spec import read_spec
from tests.sweep.conftest import SMALL, write_spec


def test_a_drawn_efficiency_keeps_each_models_attention_share_and_each_chips_other_efficiencies(fixture_db, tmp_path):
    """Calibrated, the scenario times DeepSeek-V3's attention at MLA's fitted share and Llama-3.1-70B's at GQA's, and
    each chip's routed experts at its architecture family's share. A sweep that draws the decode GEMM share (one draw
    for every family alike) dropped every group's values, so that every model's attention and every chip's experts
    ran at the shared share: it keeps each group's value of what it does not draw."""
    text = 'scenario = "calibrated"\n' + SMALL.replace("seed = 11\n", 'seed = 11\nvary = ["decode_mfu_frac"]\n')
    plan = load_plan(read_spec(write_spec(tmp_path, text)), fixture_db)
    s = plan.scenario
    kinds = set(plan.cases["attention"].to_list())
    assert {"mla", "gqa"} <= kinds and set(s.efficiencies_by_attention) >= kinds
    shares = {k: s.efficiencies_by_attention[k]["attention_mfu_frac"] for k in kinds}
    assert shares["mla"] != pytest.approx(shares["gqa"], rel=1e-3)  # the kinds differ, or the test proves nothing
    for case in range(plan.cases.height):
        settings = plan.task(case, 0).settings
        family = s.efficiencies_by_architecture[plan.cases["architecture"][case]]
        assert np.ndim(settings["mfu"]) == 1  # drawn: one value a draw
        assert settings["attention_mfu"] == pytest.approx(shares[plan.cases["attention"][case]], rel=1e-12)
        assert settings["expert_mfu"] == pytest.approx(family["expert_mfu_frac"], rel=1e-12)
