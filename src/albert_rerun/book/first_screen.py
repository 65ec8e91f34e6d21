"""The introduction's first screen as values (a ``book.values`` provider): per claim its
plain reading and paper-positive size, the lists of claims, the scale against ALBERT-base."""
from __future__ import annotations

import math

from ..profiles import ResolvedProfile, resolve
from . import plain as PL
from .headlines import HEADLINES, holm_only

# {{ intro_<name>_... }}: the decision behind each key and its short name
LINES = {"asymmetry": ("asymmetry", "whether sharing the FFN costs more than sharing attention"),
         "sharing": ("confirm/sharing-cost", "sharing's cost"),
         "sop": ("sop_nsp", "sentence-order (SOP) against next-sentence prediction (NSP)"),
         "dropout": ("dropout", "dropout"),
         "equal_time": ("wall_clock", "equal time"),
         "transitions": ("transitions", "transitions"),
         "embedding": ("embedding_sweep", "a small E")}
HOLD = (PL.HOLDS, PL.TINY)
AGAINST = (PL.REVERSED, PL.REVERSED_TINY, PL.DIFFERS)


def reading(row) -> str:
    """The plain reading with why where it could seem to disagree with its interval."""
    head, _, reason = PL.row_reading(row).partition(": ")
    if head == PL.NOT_TESTABLE:
        return f"{head} ({reason.split(', so ')[0].split('. ')[0].split(' (')[0]})"
    note = row.get("note")
    if isinstance(note, str) and note:
        return f"{head} ({note})"
    turned = PL.paper_positive(row)
    if holm_only(turned, head):
        return f"{head} ({PL.HOLM_NOTE})"
    if head == PL.UNDECIDED and int(turned.get("paper_sign", 0) or 0) and turned["estimate"]:
        side = "the paper's side" if float(turned["estimate"]) > 0 else "the other side"
        return f"{head}, leaning to {side}"
    return head


def rows(profile: ResolvedProfile) -> dict:
    """{line: row}: the confirmatory row where judged, else the profile's family's."""
    from .confirmatory import confirmatory_extras, confirmatory_rows
    from ..studies.decisions import MissingRuns
    from .ledger import book_family
    confirmed = {**confirmatory_rows(), **confirmatory_extras()}
    try:
        family = book_family(profile)
    except MissingRuns:  # nothing stored at this profile yet
        family = None
    out = {}
    for name, (source, _) in LINES.items():
        key = HEADLINES[source].key if source in HEADLINES else source
        if source in confirmed:
            out[name] = confirmed[source]
        elif family is not None and key in family.index:
            out[name] = family.loc[key]
    return out


def below_margin(row) -> str:
    """A note where a row holds, not tiny, though its 95% interval lies inside its margin."""
    if row is None or not math.isfinite(float(row.get("margin", math.nan))):
        return ""
    turned, margin = PL.paper_positive(row), float(row["margin"])
    low, high = float(turned["low"]), float(turned["high"])
    if not -margin <= low <= high <= margin or ("stage" in row
                                                  and "tiny" in PL.row_reading(row)):
        return ""
    return PL.INSIDE_NOTE


def values(profile: ResolvedProfile | str) -> dict:
    """The introduction's keys: each line's reading, size and note, lists, scale."""
    profile = resolve(profile)
    found = rows(profile)
    out, lists = {}, {"hold": [], "against": [], "undecided": [], "untestable": []}
    for name, (_, short) in LINES.items():
        row = found.get(name)
        out[f"intro_{name}_reading"] = reading(row) if row is not None else "not run yet"
        out[f"intro_{name}_size"] = PL.size(row) if row is not None else "no result yet"
        head = PL.row_reading(row).partition(": ")[0] if row is not None else ""
        part = ("hold" if head in HOLD else "against" if head in AGAINST else
                "untestable" if head == PL.NOT_TESTABLE else "undecided")
        note = below_margin(row) if part in ("hold", "against") else ""
        out[f"intro_{name}_note"] = f" ({note})" if note else ""
        if part == "undecided" and row is not None and isinstance(row.get("note"), str):
            note = row["note"]  # why it stays undecided, beside the list's name
        if row is not None:  # a line not run yet is in no list
            lists[part].append(short + (f" ({note})" if note else ""))
    exact = exact_values()
    if all(exact[k].startswith("holds") for k in ("intro_share_reading",
                                                  "intro_reductions_reading")):
        lists["hold"].insert(0, "the parameter savings (counted)")  # chapters 1 and 2
    for part, names in lists.items():
        out[f"intro_{part}"] = "; ".join(names) or "none"
    seeds = {int(r["n_seeds"]) for n, r in found.items()
             if n in ("asymmetry", "sop", "dropout", "equal_time") and "holm_tests" in r}
    out["intro_source"] = (f"the pre-registered test, {max(seeds)} fresh seeds" if seeds
                           else f"the `{profile.name}` profile, exploratory")
    margin = found.get("asymmetry", {}).get("margin") if "asymmetry" in found else None
    out["intro_asymmetry_margin"] = f"{float(margin):.4f}" if margin is not None else "none"
    from .confirmatory import detectable
    power = detectable("asymmetry").get("confirm/asymmetry", {})
    out["intro_asymmetry_detect"] = power.get("smallest", "no power computed")
    sharing = found.get("sharing")
    cost = None if sharing is None else float(PL.paper_positive(sharing)["estimate"])
    out["intro_sharing_perplexity"] = "not run yet" if cost is None else f"{math.expm1(cost):.0%}"
    from ..studies import conditions
    from ..studies.confirm_analysis import PILOT_PROFILE
    layers = resolve(PILOT_PROFILE).layers  # the sharing cost's models; all shared: one layer
    out["intro_reduction_ours"] = f"{1 - 1 / layers:.0%}"
    deep = conditions.transitions(profile)["ALBERT-style"]  # the models of the reading above
    out["intro_transitions_models"] = (f"{deep.model.num_hidden_layers} layers, "
                                       f"{deep.max_steps:,} steps")
    out.update(embedding_check())
    return {**out, **exact, **scale_values(), **stage_values(), **paper_values()}


def embedding_check(store=None) -> dict:
    """Chapter 8's check after the results on the confirmatory seeds: how much sharing
    shrinks the larger E's gain (paper-positive), the seeds, and which E wins, all shared."""
    from .confirmatory import ARMS, runs
    from .embedding_size import post_hoc_intervals, post_hoc_values
    ce = runs(store).pivot(index="seed", columns="condition", values="mlm_loss_at_mask")
    found = post_hoc_intervals(ce.reindex(columns=ARMS))
    if not found:
        return dict.fromkeys(("intro_embedding_posthoc", "intro_embedding_seeds",
                              "intro_embedding_winner"), "not stored yet")
    larger = found["esweep_shared_confirm"]
    return {"intro_embedding_posthoc": post_hoc_values(found)["esweep_interaction"],
            "intro_embedding_seeds": str(larger.n),
            "intro_embedding_winner": ("the larger E still wins" if larger.low > 0 else
                                       "the smaller E wins" if larger.high < 0 else
                                       "neither E wins clearly")}


def stage_values(store=None) -> dict:
    """Per 4x arm, the seeds below the left-bigram rung; the not-shared gain from E 32."""
    from ..stats.inference import paired_t
    from ..studies import confirm_analysis as C
    from .scale import rung_levels
    from ..studies.decisions import interval_text
    arms = {"bert": (C.BERT,), "all64": (C.ALL64,), "wide": (C.WIDE,), "none32": (C.NONE32,),
            "e32": (C.ALBERT, C.NONE32, C.ATTENTION, C.FFN)}
    if not C.complete(store):  # nothing is read before every confirmatory run is stored
        return {f"stage_{k}_4x": "not run yet" for k in (*arms, "e_gain")}
    ce = C.confirmatory_frame(store=store).pivot(index="seed", columns="condition",
                                                  values=C.CE)
    rung = rung_levels()["left bigram"]

    def past(*group) -> str:
        below = sum(int((ce[arm] < rung).sum()) for arm in group)
        return f"{below} of {len(ce) * len(group)}"
    gain = paired_t(ce[C.NONE32], ce[C.BERT])
    return {**{f"stage_{k}_4x": past(*group) for k, group in arms.items()},
            "stage_e_gain_4x": interval_text(gain["estimate"], gain["low"], gain["high"],
                                             "nats")}


def exact_values() -> dict:
    """Chapters 1 and 2's readings (how many printed counts match) and headline numbers."""
    from .exact import embedding_share, sharing_reductions
    from .text import times
    one, two = embedding_share().texts, sharing_reductions().texts
    return {"intro_share_reading": f"{one['share_reading']}; {one['table3_one_convention']} "
                                   f"of {one['table3_rows']} counts under one convention",
            "intro_embedding_share": f"{one['bert_embedding_share']:.1f}%",
            "intro_reductions_reading": f"{two['reductions_reading']}; {two['counts_matched']} "
                                        f"of the {two['counts_total']} printed counts match",
            "intro_large_ratio": times(two["large_ratio"]),
            "intro_reduction_all": f"{two['reduction_all']:.0f}%"}


def scale_values() -> dict:
    """The base model's parameters and the 16x budget's tokens against ALBERT-base's."""
    from .text import times
    from ..studies.ladder import RUNGS
    from .scale import _count, scale_numbers
    n = scale_numbers(resolve("cpu"))
    tokens = n["tokens"] * RUNGS["16x"] / n["steps"]
    return {"intro_params": f"{n['params'] / 1e6:.2f} million",
            "intro_params_times": times(n["paper_params"] / n["params"]),
            "intro_paper_params": f"{n['paper_params'] / 1e6:.0f} million",
            "intro_steps_16x": f"{RUNGS['16x']:,}",
            "intro_tokens_16x": _count(tokens),
            "intro_tokens_times": times(n["paper_tokens"] / tokens),
            "intro_paper_tokens": _count(n["paper_tokens"])}


def paper_values() -> dict:
    """The paper's Table 4 differences in Avg points."""
    from ..paper import TABLE4_AVG as T
    out = {f"paper_t4_{scheme}": f"{T[(128, scheme)] - T[(128, 'none')]:+.1f}"
           for scheme in ("attention", "ffn", "all")}
    for e in (128, 768):
        out[f"paper_t4_asymmetry_{e}"] = f"{T[(e, 'attention')] - T[(e, 'ffn')]:+.1f}"
    return out
