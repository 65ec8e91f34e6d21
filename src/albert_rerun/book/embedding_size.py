"""Claim 8 (chapter 8): Table 3's embedding-size sweep, not shared and all shared."""
from __future__ import annotations

import pandas as pd

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile, resolve
from ..studies.decisions import (Chapter, available, ce_decision, gated, interval_text, levels,
                                 load_runs, margins)
from .downstream import downstream
from .text import metrics_table, parameter_count, scale_short


def embedding_sweep(profile: ResolvedProfile | str, seeds=None, device="auto",
                    train_missing=False, present: bool = True,
                    partial: bool = False) -> Chapter:
    """Claim 8: Table 3's E sweep, not shared and all shared."""
    profile = resolve(profile)  # a notebook passes the name
    seeds = seeds or C.default_seeds(profile)
    rungs = levels(profile)
    m = margins(rungs)
    runs = load_runs(profile, C.embedding_sweep(profile), seeds, device, train_missing,
                     partial=partial)
    b = C.base(profile)
    sizes = C.CLAIM_SIZES[profile.name].embedding_sizes
    conditions = {k: c for k, c in C.embedding_sweep(profile).items()
                  if k in set(runs["condition"])}
    chapter = Chapter("embedding_sweep", runs,
                      gated(embedding_decisions(runs, min(sizes), b.model.embedding_size,
                                                b.model.hidden_size, m), runs, rungs,
                            peak_gate(sizes, b.model.hidden_size)))
    table = metrics_table(runs, {"params (M)": pd.Series(
        {k: round(parameter_count(c) / 1e6, 3) for k, c in conditions.items()})})
    chapter.tables["sweep"] = table
    chapter.tables["paper"] = pd.DataFrame(
        [{"sharing": sh, "E": e, "params (M)": paper.TABLE3_PARAMS[(sh, e)],
          "Avg": paper.TABLE3_AVG[(sh, e)]} for (sh, e) in paper.TABLE3_AVG]).set_index(
        ["sharing", "E"])
    chapter.texts.update(small=str(min(sizes)), mid=str(b.model.embedding_size),
                         H=str(b.model.hidden_size), scale_short=scale_short(runs, b))
    return downstream(chapter, profile) if present else chapter


def peak_gate(sizes, H: int) -> dict:
    """The all-shared decision needs the sweep to reach a small E: Table 3's all-shared
    models peak at E = 128 = H/6, and at H/3 (E = 256) the paper's model is already worse
    than at E = H, so a sweep of two sizes that stops at H/2 cannot locate the peak.
    Until the sweep has three sizes, one at or below H/4, it is not testable."""
    if len(sizes) >= 3 and min(sizes) <= H / 4:
        return {}
    return {"embedding/all-shared": f"only E = {', '.join(map(str, sizes))} trained, none at or "
                                    f"below H/4"}


def embedding_decisions(runs, small: int, mid: int, H: int, m: dict) -> list:
    """The two decisions, each labelled in the paper's direction ('larger E vs smaller
    E' not shared, 'smaller E vs larger E' all shared; no ' minus ', so that a page that
    turns a difference to the paper's side keeps the label as it reads). The registered
    difference stays the first arm's loss minus the second's, its paper sign -1."""
    p = paper.TABLE3_AVG
    out = []
    if available(runs, f"none, E={H}", f"none, E={small}"):
        out.append(ce_decision(runs, "embedding/not-shared", "embedding_sweep",
                               f"not shared: larger E ({H}) vs smaller E ({small})", f"none, E={H}",
                               f"none, E={small}", m["ce"], -1,
                               # our small E stands for the paper's 128, as in chapter 3
                               # and the all-shared decision
                               f"{p[('none', 768)] - p[('none', 128)]:+.1f} Avg (768 vs 128)"))
    if available(runs, f"all, E={mid}", f"all, E={H}"):
        out.append(ce_decision(runs, "embedding/all-shared", "embedding_sweep",
                               f"all shared: smaller E ({mid}) vs larger E ({H})", f"all, E={mid}",
                               f"all, E={H}", m["ce"], -1,
                               f"{p[('all', 128)] - p[('all', 768)]:+.1f} Avg (128 vs 768)"))
    return out


def paper_side(row) -> str:
    """A decision's difference and 95% interval turned so that positive is the paper's
    direction ('+0.021 [-0.002, +0.044] nats'): ``row`` is a family's row or a Decision,
    with ``estimate``, ``low``, ``high``, ``paper_sign`` and ``unit``. A paper that
    claims no difference (sign 0) keeps the registered sign."""
    get = row.get if hasattr(row, "get") else lambda k: getattr(row, k)
    sign = -1 if int(get("paper_sign")) < 0 else 1
    low, high = sorted((sign * float(get("low")), sign * float(get("high"))))
    unit = str(get("unit"))
    return f"{interval_text(sign * float(get('estimate')), low, high, unit)} {unit}"
