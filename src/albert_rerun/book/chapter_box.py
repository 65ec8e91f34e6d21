"""What a measured chapter glues, positive the paper's direction: its first screen's values
and each exploratory decision's line."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..studies.confirm_analysis import FAIR
from ..studies.decisions import unit_digits
from .headlines import answer, one_label, paper_positive, turned_label


def chapter_glue(claim: str, chapter, family: pd.DataFrame, prefix: str,
                 profile: ResolvedProfile | str) -> dict:
    """A chapter's glue: margins, rungs, each ``decision_line`` and its texts (``prefix``)."""
    out = glue_values(prefix, margin_values(resolve(profile)))
    out.update({d.key.replace("/", "_"): decision_line(d, family) for d in chapter.decisions})
    out.update(glue_values(prefix, chapter.texts))
    return out


def margin_values(profile: ResolvedProfile) -> dict:
    """The margins and the rungs they come from, formatted."""
    from ..studies.decisions import levels, margins
    reference = levels(profile)
    m, r = margins(reference), reference["rungs"]
    return {"ce_margin": f"{m['ce']:.3f}", "small_margin": f"{m['small']:.4f}",
            "pairs_margin": f"{m['pairs']:g}", "chance_margin": f"{m['chance']:.0f}",
            "unigram": f"{r['unigram_loss_at_mask']:.3f}",
            "bigram": f"{r['bigram_loss_at_mask']:.3f}", "targets": f"{r['targets']:,}"}


def _row(d, family: pd.DataFrame | None):
    """(row, judged): the family's Holm-adjusted row where it judges ``d``, else its own."""
    if family is not None and d.key in family.index and bool(family.loc[d.key, "in_family"]):
        return family.loc[d.key].copy(), True
    return pd.Series(d.to_dict()), False


def decision_line(d, family: pd.DataFrame | None = None) -> str:
    """One decision's reading, difference, margin and stage, paper-positive."""
    from ..stats.inference import EARLY, GATED, NO_MODEL, PAST, level_percent
    row, judged = _row(d, family)
    a = answer(row)
    if row["stage"] == GATED:
        return f"{a['reading']} ({a['why']}); measured {a['difference']}"
    reading = (one_label({**a, "why": ""}) if judged else
               f"{a['reading']} (at 5%, outside Holm's family)")
    text = f"{reading}, {a['difference']}, margin {a['margin']}"
    if d.stage == EARLY:
        text += f"; early training, weakest arm at {level_percent(d.weakest_level)}"
    elif d.stage == PAST:
        text += "; every arm past the bigram rung"
    elif d.stage == NO_MODEL:
        text += "; no trained model"
    return text


def verdict_table(chapter, family: pd.DataFrame) -> pd.DataFrame:
    """A chapter's decisions, paper-positive: difference, margin and plain reading."""
    rows = []
    for d in chapter.decisions:
        row, judged = _row(d, family)
        a = answer(row)
        reading = one_label(a) if judged else (one_label({**a, "holm_only": ""})
                                               + " (at 5%, outside Holm's family)")
        rows.append({"comparison": paper_positive(row)["label"], "ours": a["difference"],
                     "margin": a["margin"], "plain reading": reading})
    return pd.DataFrame(rows).set_index("comparison")


NOT_JUDGED = "not judged yet"  # a first screen's reading before every run is stored


def confirmed_values(row, premise: str = "") -> dict:
    """``answer`` of a chapter's confirmatory row; 'not judged yet' where it is None."""
    if row is None:
        return {"reading": NOT_JUDGED, "why": "", "difference": "not computed yet",
                "margin": "—", "seeds": "—", "holm_only": ""}
    return answer(row, premise)


def paper_side(trends: list) -> list:
    """The ladder's ``Trend``s turned so that positive is the paper's direction."""
    from .ladder_trend import tag
    out = []
    for t in trends:
        registered = t.sign * t.paper_sign  # the registration's paper sign
        label = t.registered_label or t.label  # the registration's words
        if registered < 0:
            label = turned_label(label)
            head, _, rest = label.partition(", ")
            label = head if rest == tag(t.key) else label  # the panel's title names it
        out.append(replace(t, sign=registered or 1, paper_sign=int(registered != 0),
                           label=label, registered_label=""))
    return out


def trend_values(t) -> dict:
    """A ``paper_side`` trend's values for a chapter's sentence; '—' before the ladder."""
    from .ladder_trend import plain_words
    from ..studies.decisions import signed
    if t.table is None:
        return {"reading": "not known yet",
                **dict.fromkeys(("p", "1x", "4x", "16x", "steps"), "—")}
    r, d = t.table, unit_digits(t.unit)
    return {"reading": str(r["reading"]), "p": f"{r['p holm']:.3f}",
            **{rung: f"{signed(t.turned(r[f'{rung} mean']), d)} {t.unit}"
               for rung in ("1x", "4x", "16x")},
            "steps": plain_words(t.key, t.unit, r)}


# a glued value's name as a reader meets it in a folded cell's table
SHOWN_NAMES = {"reading": "plain reading", "why": "why", "holm_only": "note",
               "difference": "difference [95% interval]", "p": "Holm's p",
               "steps": "step by step", "median": "median seconds ratio",
               "flagged": f"seeds outside {FAIR[0]:g} to {FAIR[1]:g}"}


def shown(values: dict, columns: dict | None = None) -> pd.DataFrame:
    """Glued ``values`` as a reader's table: one column, or one per key of a dict of dicts
    (renamed by ``columns``); rows named in words; rows empty in every column left out."""
    table = bool(values) and all(isinstance(v, dict) for v in values.values())
    frame = pd.DataFrame(values if table else {"value": values}).astype(str)
    frame = frame.rename(columns=columns or {}, index=lambda k: SHOWN_NAMES.get(
        k, str(k).replace("_", " ")))
    return frame[(frame != "").any(axis=1)]


def glue_values(prefix: str, values: dict) -> dict:
    """``values`` under ``prefix`` + key, for ``myst_nb.glue``."""
    return {f"{prefix}{key}": value for key, value in values.items()}


def image(fig):
    """A figure as the PNG a chapter glues, the figure closed."""
    import matplotlib.pyplot as plt
    from IPython.display import Image

    from .figures import png
    data = png(fig, dpi=100)
    plt.close(fig)
    return Image(data=data, format="png")
