"""Claim 8 (chapter 8): Table 3's embedding-size sweep, not shared and all shared."""
from __future__ import annotations

import pandas as pd

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile
from ..studies.decisions import Chapter, available, ce_decision, gated
from .downstream import downstream
from .plain import chapter_runs
from .text import metrics_table, parameter_count, scale_short


def embedding_sweep(profile: ResolvedProfile | str, seeds=None, device="auto",
                    train_missing=False, present: bool = True,
                    partial: bool = False) -> Chapter:
    """Claim 8: Table 3's E sweep, not shared and all shared."""
    profile, seeds, rungs, m, runs = chapter_runs(profile, C.embedding_sweep, seeds, device,
                                                  train_missing, partial)
    b = C.base(profile)
    sizes = C.CLAIM_SIZES[profile.name].embedding_sizes
    H = b.model.hidden_size
    conditions = {k: c for k, c in C.embedding_sweep(profile).items()
                  if k in set(runs["condition"])}
    made = embedding_decisions(runs, min(sizes), b.model.embedding_size, H, m)
    chapter = Chapter("embedding_sweep", runs, gated(made, runs, rungs, peak_gate(sizes, H)))
    chapter.tables["sweep"] = metrics_table(runs, {"params (M)": pd.Series(
        {k: round(parameter_count(c) / 1e6, 3) for k, c in conditions.items()})})
    chapter.tables["paper"] = pd.DataFrame(
        [{"sharing": sh, "E": e, "params (M)": paper.TABLE3_PARAMS[(sh, e)],
          "Avg": paper.TABLE3_AVG[(sh, e)]} for (sh, e) in paper.TABLE3_AVG]).set_index(
        ["sharing", "E"])
    chapter.texts.update(small=str(min(sizes)), mid=str(b.model.embedding_size),
                         H=str(H), scale_short=scale_short(runs, b))
    return downstream(chapter, profile) if present else chapter


def peak_gate(sizes, H: int) -> dict:
    """The all-shared decision needs a sweep that can locate Table 3's peak (E = 128 =
    H/6): three sizes, one at or below H/4; else it is not testable."""
    if len(sizes) >= 3 and min(sizes) <= H / 4:
        return {}
    return {"embedding/all-shared": f"only E = {', '.join(map(str, sizes))} trained, none at or "
                                    f"below H/4"}


def embedding_decisions(runs, small: int, mid: int, H: int, m: dict) -> list:
    """Not shared, larger E vs smaller E; all shared, smaller E vs larger E. Labels use
    'vs' (no ' minus '), so a page that turns the sign keeps them; the registered
    difference is the first arm's loss minus the second's, paper sign -1. Our small E
    stands for the paper's 128."""
    p = paper.TABLE3_AVG
    out = []
    if available(runs, f"none, E={H}", f"none, E={small}"):
        out.append(ce_decision(runs, "embedding/not-shared", "embedding_sweep",
                               f"not shared: larger E ({H}) vs smaller E ({small})", f"none, E={H}",
                               f"none, E={small}", m["ce"], -1,
                               f"{p[('none', 768)] - p[('none', 128)]:+.1f} Avg (768 vs 128)"))
    if available(runs, f"all, E={mid}", f"all, E={H}"):
        out.append(ce_decision(runs, "embedding/all-shared", "embedding_sweep",
                               f"all shared: smaller E ({mid}) vs larger E ({H})", f"all, E={mid}",
                               f"all, E={H}", m["ce"], -1,
                               f"{p[('all', 128)] - p[('all', 768)]:+.1f} Avg (128 vs 768)"))
    return out


