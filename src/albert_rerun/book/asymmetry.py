"""Claim 3 (chapter 3): Table 4's eight cells (E small and E = H, four sharing
schemes) and grouped sharing (G groups of layers)."""
from __future__ import annotations

import pandas as pd

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile
from ..studies.decisions import Chapter, ce_decision, gated, interval_text, load_runs
from .exact import SHARED
from .plain import chapter_runs
from .text import metrics_table, params_column, scale_short


def asymmetry(profile: ResolvedProfile | str, seeds=None, device="auto",
              train_missing=False, present: bool = True) -> Chapter:
    """Claim 3: Table 4's eight cells and grouped sharing."""
    profile, seeds, rungs, m, runs = chapter_runs(profile, C.asymmetry, seeds, device,
                                                  train_missing)
    cells = {k: c for k, c in C.asymmetry(profile).items() if k in set(runs["condition"])}
    groups = C.grouped(profile) if "grouped" in C.profile_claims(profile) else {}
    grouped = (load_runs(profile, {f"G={g}": c for g, c in groups.items()}, seeds, device,
                         train_missing) if groups else runs.iloc[0:0])
    b = C.base(profile)
    small, H = b.model.embedding_size, b.model.hidden_size
    made = asymmetry_decisions(runs, grouped, small, H, sorted(groups), m)
    decisions = gated(made, pd.concat([runs, grouped]), rungs, resolution_gate(made, m["small"]))
    chapter = Chapter("asymmetry", runs, decisions, extra={"grouped": grouped})
    table = metrics_table(runs, params_column(cells))
    cell = {k: (128 if c.model.embedding_size == small else 768, c.model.sharing)
            for k, c in cells.items()}  # Table 4's cell for each of ours
    table["paper params (M)"] = [paper.TABLE4_PARAMS[cell[k]] for k in table.index]
    table["paper Avg"] = [paper.TABLE4_AVG[cell[k]] for k in table.index]
    table.index = [f"E {cells[k].model.embedding_size}, {SHARED[cells[k].model.sharing]}"
                   for k in table.index]  # the reader's names, not the condition keys
    table.index.name = "condition"
    chapter.tables["cells"] = table
    chapter.tables["costs"] = costs_table(runs, decisions, small, H, m["ce"])
    if groups:
        chapter.tables["grouped"] = metrics_table(grouped, params_column(
            {f"G={g}": c for g, c in groups.items()}))
    chapter.texts.update(scale=scale_short(runs, b),
                         runs=str(len(distinct_runs(runs, grouped))))
    return chapter


def distinct_runs(runs: pd.DataFrame, grouped: pd.DataFrame) -> pd.DataFrame:
    """The chapter's runs counted once (G = 1 and G = L are cells of ``runs``)."""
    return pd.concat([runs, grouped]).drop_duplicates("hash")


def costs_table(runs, decisions, small: int, H: int, margin: float) -> pd.DataFrame:
    """Table 4 as costs, positive where sharing costs, beside the paper's."""
    judged = {tuple(d.arms) for d in decisions}
    costs = {}
    for e in (small, H):
        for scheme in [s for s in ("attention", "ffn", "all")
                       if {f"E={e}, {s}", f"E={e}, none"} <= set(runs["condition"])]:
            d = ce_decision(runs, "", "", "", f"E={e}, {scheme}", f"E={e}, none", margin, -1)
            paper_e = 128 if e == small else 768
            costs[(e, scheme)] = {
                "our cost (nats)": interval_text(d.estimate, d.low, d.high, "nats"),
                "paper's cost (Avg points)": round(paper.TABLE4_AVG[(paper_e, "none")]
                                                   - paper.TABLE4_AVG[(paper_e, scheme)], 1),
                "judged below": ("yes" if (f"E={e}, {scheme}", f"E={e}, none")
                                         in judged else "no")}
    if not costs:
        return pd.DataFrame()
    table = pd.DataFrame(costs).T.rename_axis(["E", "shared"])
    return table.rename(index={"ffn": "FFN"}, level="shared")


RESOLVING_MARGINS = 1.0  # the whole sharing cost, in margins, that sub-costs need


def resolution_gate(decisions, margin: float) -> dict:
    """{key: reason} gating the partial costs where the whole cost stays under a margin."""
    whole = {d.key.rsplit("/", 1)[1]: d for d in decisions
             if d.key.startswith("asymmetry/all-none/")}
    out = {}
    for d in decisions:
        name = d.key.rsplit("/", 1)[1]
        far = (max(abs(whole[name].low), abs(whole[name].high)) if name in whole
               else float("inf"))
        if (d.key.startswith(("asymmetry/attention-ffn/", "asymmetry/attention-none/"))
                and far < RESOLVING_MARGINS * margin):
            out[d.key] = (f"the whole cost of sharing here reaches only {far:.3f} nats, "
                          f"under the margin {margin:.3g}")
    return out


def asymmetry_decisions(runs, grouped, small: int, H: int, groups, m: dict) -> list:
    """Table 4's decisions at both E, and grouped sharing's first step."""
    words = {"all": "all shared", "none": "not shared", "attention": "attention-shared",
             "ffn": "FFN-shared"}
    # CE is higher when all is shared: the paper's Avg is lower, so its side is +
    pairs = (("all", "none", "ce", +1), ("attention", "ffn", "small", -1))
    specs = [(e, pe, name, *pair) for e, pe, name in ((small, 128, "small-E"), (H, 768, "E=H"))
             for pair in pairs] + [(small, 128, "small-E", "attention", "none", "small", 0)]
    present = set(runs["condition"])
    out = [ce_decision(runs, f"asymmetry/{a}-{b}/{name}", "asymmetry",
                       f"{words[a]} minus {words[b]}, E = {e}", f"E={e}, {a}", f"E={e}, {b}",
                       m[margin], sign,
                       f"{paper.TABLE4_AVG[(pe, a)] - paper.TABLE4_AVG[(pe, b)]:+.1f} Avg")
           for e, pe, name, a, b, margin, sign in specs
           if {f"E={e}, {a}", f"E={e}, {b}"} <= present]
    if len(groups) < 2:
        return out
    # G = 1 to the smallest G > 1: a slope over log2 G at 1, 2, 4 would weigh only its ends
    first = min(g for g in groups if g > 1)
    out.append(ce_decision(grouped, "asymmetry/groups-first-step", "asymmetry",
                           f"G = {first} minus G = 1 (all shared)", f"G={first}", "G=1",
                           m["ce"], -1, "more groups better (no numbers)"))
    return out
