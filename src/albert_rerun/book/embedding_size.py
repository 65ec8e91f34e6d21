"""Claim 8 (chapter 8): Table 3's embedding-size sweep, not shared and all shared."""
from __future__ import annotations

import pandas as pd

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile
from ..studies.decisions import Chapter, available, ce_decision, gated
from .downstream import downstream
from .plain import chapter_runs
from .text import metrics_table, params_column, scale_short


def embedding_sweep(profile: ResolvedProfile | str, seeds=None, device="auto",
                    train_missing=False, present: bool = True) -> Chapter:
    """Claim 8: Table 3's E sweep, not shared and all shared."""
    profile, seeds, rungs, m, runs = chapter_runs(profile, C.embedding_sweep, seeds, device,
                                                  train_missing)
    b = C.base(profile)
    sizes = C.CLAIM_SIZES[profile.name].embedding_sizes
    H = b.model.hidden_size
    conditions = {k: c for k, c in C.embedding_sweep(profile).items()
                  if k in set(runs["condition"])}
    made = embedding_decisions(runs, min(sizes), b.model.embedding_size, H, m)
    chapter = Chapter("embedding_sweep", runs, gated(made, runs, rungs, peak_gate(sizes, H)))
    chapter.tables["sweep"] = metrics_table(runs, params_column(conditions))
    chapter.tables["paper"] = pd.DataFrame(
        [{"sharing": sh, "E": e, "params (M)": paper.TABLE3_PARAMS[(sh, e)],
          "Avg": paper.TABLE3_AVG[(sh, e)]} for (sh, e) in paper.TABLE3_AVG]).set_index(
        ["sharing", "E"])
    chapter.texts.update(small=str(min(sizes)), mid=str(b.model.embedding_size),
                         H=str(H), scale_short=scale_short(runs, b))
    return downstream(chapter, profile) if present else chapter


def peak_gate(sizes, H: int) -> dict:
    """Gates the all-shared decision without three sizes, one at or below H/4."""
    if len(sizes) >= 3 and min(sizes) <= H / 4:
        return {}
    return {"embedding/all-shared": f"only E = {', '.join(map(str, sizes))} trained, none at or "
                                    f"below H/4 = {H // 4}"}


def embedding_decisions(runs, small: int, mid: int, H: int, m: dict) -> list:
    """Not shared, larger E vs smaller; all shared, smaller vs larger (paper sign -1)."""
    p = paper.TABLE3_AVG
    specs = (("not-shared", "none", "not shared: larger E ({}) vs smaller E ({})", H, small,
              768, 128),
             ("all-shared", "all", "all shared: smaller E ({}) vs larger E ({})", mid, H,
              128, 768))
    return [ce_decision(runs, f"embedding/{key}", "embedding_sweep", words.format(a, b),
                        f"{sh}, E={a}", f"{sh}, E={b}", m["ce"], -1,
                        f"{p[(sh, pa)] - p[(sh, pb)]:+.1f} Avg ({pa} vs {pb})")
            for key, sh, words, a, b, pa, pb in specs
            if available(runs, f"{sh}, E={a}", f"{sh}, E={b}")]


POST_HOC = {"esweep_shared_confirm": "all shared: larger E (64) vs smaller E (32)",
            "esweep_interaction": "larger E's gain: not shared minus all shared"}


def post_hoc(ce: pd.DataFrame) -> pd.DataFrame:
    """The two differences of ``POST_HOC``, which the registration did not name, per
    confirmatory seed (``ce``: cross-entropy at [MASK] by seed and arm): the larger E's
    advantage, all shared (the paper predicts no sign between H/2 and H, so it keeps the
    not-shared row's orientation); and how much of that advantage sharing takes away,
    positive the paper's direction (sharing favours the smaller E)."""
    from .confirmatory import ALBERT, ALL64, BERT, NONE32
    first, second = POST_HOC.values()
    return pd.DataFrame({first: ce[ALBERT] - ce[ALL64],
                         second: (ce[NONE32] - ce[BERT]) - (ce[ALBERT] - ce[ALL64])}).dropna()


def post_hoc_intervals(ce: pd.DataFrame) -> dict:
    """{``POST_HOC`` key: mean and 95% t-interval of ``post_hoc(ce)`` over its seeds}; {}
    before any seed is stored."""
    from ..stats.inference import mean_interval
    found = post_hoc(ce)
    return {} if found.empty else {key: mean_interval(found[column])
                                   for key, column in POST_HOC.items()}


def post_hoc_values(intervals: dict) -> dict:
    """``post_hoc_intervals``' keys as 'mean nats [low, high]' ('not stored yet' before)."""
    from .plain import difference
    return {key: difference(intervals[key].mean, intervals[key].low, intervals[key].high,
                            "nats") if key in intervals else "not stored yet"
            for key in POST_HOC}
