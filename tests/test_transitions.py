"""claims.transitions: the roughness measure does not penalise a steady decline, and
the first transition (from the embedding) is reported apart."""
import pandas as pd
import pytest

from albert_rerun.claims import transitions
from albert_rerun.claims.transitions import roughness


def test_roughness_is_zero_for_a_steady_decline_and_positive_for_a_zig_zag():
    assert roughness([5.0, 4.0, 3.0, 2.0, 1.0]) == 0.0
    assert roughness([1.0, 2.0, 3.0]) == 0.0  # a steady rise as well
    zigzag = [3.0, 1.0, 3.0, 1.0, 3.0]
    assert roughness(zigzag) == pytest.approx(4.0 / (11 / 5))  # |2nd diff| = 4, mean 2.2
    assert roughness([2 * x for x in zigzag]) == pytest.approx(roughness(zigzag))
    assert roughness([4.0, 2.0, 1.0, 0.5]) > 0  # a slowing decline: its pace changes
    assert roughness([1.0, 2.0]) == 0.0


def test_the_first_transition_is_reported_apart():
    """ALBERT's first step starts from the E -> H projection: a large first step on an
    otherwise steady curve leaves the roughness at 0."""
    frame = pd.DataFrame({"condition": ["ALBERT-style", "BERT-style"], "seed": [0, 0],
                          "transition_l2": [[9.0, 4.0, 3.0, 2.0], [2.0, 4.0, 2.0, 4.0]],
                          "transition_angle": [[80.0, 30.0, 30.0, 30.0],
                                               [40.0, 20.0, 40.0, 20.0]]})
    out = transitions.add_roughness(frame)
    assert out.loc[0, "roughness_l2"] == 0.0 and out.loc[0, "first_l2"] == 9.0
    assert out.loc[0, "roughness_angle"] == 0.0 and out.loc[0, "last_angle"] == 30.0
    assert out.loc[1, "roughness_l2"] > 0 and out.loc[1, "roughness_angle"] > 0
    assert "roughness_l2" not in frame  # the input is left as it was
