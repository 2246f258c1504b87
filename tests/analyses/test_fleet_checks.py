"""econ fleet's inputs checked before anything is read, and its prompt- and output-length mixes."""

from __future__ import annotations

import pytest

from econ.analyses.fleet_checks import output_mix, prompt_mix
from econ.errors import EconError


def test_one_length_or_a_mix_whose_shares_add_up_to_one():
    assert prompt_mix(None, None) is None
    assert prompt_mix(4000, None) == ((4000.0, 1.0),)
    assert prompt_mix(None, ((1000, 0.6), (8000, 0.4))) == ((1000.0, 0.6), (8000.0, 0.4))


@pytest.mark.parametrize(
    ("length", "mix", "message"),
    [
        (100, ((1000, 1.0),), "both give the prompt length"),
        (None, ((1000, 0.6), (8000, 0.3)), "add up to 0.9"),
        (None, ((0, 1.0),), "is not a prompt length"),
        (None, ((1000, float("nan")),), "is not in"),
    ],
)
def test_a_mix_that_is_not_a_distribution_is_refused(length, mix, message):
    with pytest.raises(EconError, match=message):
        prompt_mix(length, mix)


def test_output_lengths_are_checked_as_prompt_lengths_are():
    assert output_mix(None, None) is None
    assert output_mix(500, None) == ((500.0, 1.0),)
    assert output_mix(None, ((200, 0.5), (2000, 0.5))) == ((200.0, 0.5), (2000.0, 0.5))
    with pytest.raises(EconError, match="--output-tokens and --output-tokens-mix both give the output length"):
        output_mix(500, ((500, 1.0),))
    with pytest.raises(EconError, match="--output-tokens-mix: the shares add up to 0.8"):
        output_mix(None, ((200, 0.5), (2000, 0.3)))
    with pytest.raises(EconError, match="--output-tokens-mix: -5 tokens is not an output length"):
        output_mix(None, ((-5, 1.0),))
