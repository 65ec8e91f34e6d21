"""chapters.transitions: the roughness measure does not penalise a steady decline, and
the first transition (from the embedding) is reported apart."""
import pandas as pd
import pytest

from albert_rerun.chapters import transitions
from albert_rerun.stats.curves import roughness


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


def test_the_chapter_measures_oscillation_not_curvature():
    """A slowing monotone decay (convex) scores 0 on the chapter's measure, a zig-zag does
    not; the former roughness could not tell them apart."""
    frame = pd.DataFrame({"condition": ["ALBERT-style", "BERT-style"], "seed": [0, 0],
                          "transition_l2": [[9.0, 8.0, 4.0, 2.0, 1.0], [2.0, 4.0, 2.0, 4.0, 2.0]],
                          "transition_angle": [[80.0, 40.0, 20.0, 10.0, 5.0],
                                               [40.0, 20.0, 40.0, 20.0, 40.0]]})
    out = transitions.add_roughness(frame)
    assert out.loc[0, "oscillation_l2"] == 0.0 and out.loc[0, "oscillation_angle"] == 0.0
    assert out.loc[1, "oscillation_l2"] >= 1 and out.loc[1, "oscillation_angle"] >= 1
    assert out.loc[0, "roughness_l2"] > 0.3  # the former measure calls the decay rough


def test_a_collapsed_albert_style_model_is_said_to_have_collapsed():
    """Review error 3: a model at the unigram rung whose angles fall to 0 has not learned;
    the chapter must not read that as a fixed point."""
    rungs = {"rungs": {"unigram_loss_at_mask": 6.685, "bigram_loss_at_mask": 6.147},
             "reads_context": 6.665, "distance": 0.538}
    frame = pd.DataFrame({"condition": ["ALBERT-style"] * 2, "seed": [0, 1],
                          "mlm_loss_at_mask": [6.686, 6.684],
                          "mlm_accuracy_at_mask": [0.053, 0.053],
                          "transition_angle": [[30.0, 1e-3, 1e-6], [30.0, 1e-3, 1e-6]]})
    text = transitions.convergence_text(frame, 1.0, rungs)
    assert "collapsed" in text and "fixed point" in text and "not testable" in text
    frame["mlm_loss_at_mask"] = [6.3, 6.3]  # the same curves from a model that learned
    assert "converge to a fixed point at this scale" in transitions.convergence_text(
        frame, 1.0, rungs)
