"""A measured chapter's bottom line, right under its title: the box (``bottom_line``:
the question, the paper's claim, how to read ours, and ours at each profile, the
confirmatory result first once it is judged), its small figure, and everything the
chapter's page glues (``chapter_glue``). ``box``: the same five lines for a chapter
without a decision family.
"""
from __future__ import annotations

import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..studies.decisions import capital
from .confirmatory import (confirmatory_rows, confirmed_sentence, holm_note,
                           in_chapter_sign, with_confirmatory)
from .headline_figures import headline_figure
from .headlines import GLOSSARY, HEADLINES, profile_name, result_sentence, term
from .ladder_trend import box_line


def bottom_line(claim: str, families: dict, confirmed=None, trends: list | None = None) -> str:
    """The chapter's bottom-line box (MyST, for ``{glue:md}``): the question, the paper's
    claim with its number, ours at each profile with stored results in one sentence with
    the verdict and the stage; the confirmatory result first once it is judged
    (``confirmed``: its row, turned to the chapter's sign by ``in_chapter_sign``), then
    which way it moves as training grows (``trends``: the chapter's decisions on the
    compute ladder, ``ladder_trend.claim_trends``)."""
    h = HEADLINES[claim]
    units = [f.loc[h.key, "unit"] for f in families.values() if h.key in f.index]
    lines = [f"**The question.** {h.question}", "",
             f"**The paper.** {capital(h.paper)}.", "",
             reading_line(units[0] if units else "nats"), ""]
    if confirmed is not None:  # judged once, on fresh seeds: it leads, the pilot beside
        confirmed = in_chapter_sign(claim, confirmed)
        lines += [f"**Ours, {term('confirmatory')}** (pre-registered, "
                  f"{int(confirmed['n_seeds'])} fresh seeds). "
                  f"{confirmed_sentence(confirmed, claim)}", ""]
    for profile, family in families.items():
        if h.key in family.index:
            lines += [f"**Ours, {profile_name(profile, True, confirmed is not None)}.** "
                      f"{result_sentence(family.loc[h.key], h)}", ""]
        else:
            lines += [f"**Ours, {profile_name(profile)}.** Not measured at this profile.", ""]
    if trends:  # beside its figure, after the rows it must not be read as one of
        premise = str(confirmed.get("premise", "") or "") if confirmed is not None else ""
        # only SOP's carries one ("neither model orders cue-free pairs"). A skeptical
        # reader: a forecast set beside a result whose premise fails; a cold reader: said
        # first, before the forecast it qualifies
        first = (f"At 4x the comparison's premise fails: {premise}. So the ladder's "
                 f"forecast and slope are of the difference only. Order counts as learned "
                 f"at the first rung where the SOP-trained model's probe lies above the "
                 f"majority label, its 95% interval wholly above it (registered on the "
                 f"{{doc}}`compute ladder <../ladder>` page).") if premise else ""
        order = trends[0].order  # once the ladder's result is stored
        if premise and order is not None:
            first += (f" It is learned first at {order}." if order else
                      " It is not shown to be learned at any budget (not evidence that it "
                      "is not).")
        lines += [box_line(trends, first_words=first), ""]
    return "\n".join(lines).rstrip()


# what the headline measures, by its unit (a reviewer: chapters 4 and 7 were told "nats")
METRIC = {"nats": f"{term('cross-entropy at [MASK]')} is in {term('nats')}, lower is "
                  f"better",
          "points": f"a {term('probe')}'s accuracy is in percentage points, higher is better",
          "ranges": "the oscillation of a layer-to-layer curve is in multiples of its "
                    "range, lower is smoother"}


def reading_line(unit: str) -> str:
    """The box's one line on how to read it, each term linked where the page first uses
    it, the metric's words chosen by the headline's ``unit``."""
    metric = METRIC.get(unit, f"the difference is in {unit}")
    return (f"*Reading ours:* {capital(metric)}. A difference comes with "
            f"its 95% interval and a {term('margin')}, the smallest difference that would "
            f"matter. Each result reads first in plain words, its {term('Holm')}-adjusted "
            f"verdict small beside it. The {term('stage')} says how far the models got "
            f"between the {term('rung', 'rungs')}. The rules: {{doc}}`../{GLOSSARY}` and "
            f"\"How this is judged\" below.")


def box(question: str, paper: str, ours: str, verdict: str, stage: str) -> str:
    """A bottom-line box for a chapter without a decision family (the exact claims, the
    recipe): the same five lines, from the chapter's own figures."""
    return "\n".join([f"**The question.** {question}", "", f"**The paper.** {paper}", "",
                      f"**Ours.** {ours}", "", f"**Verdict: {verdict}.** {stage}"])


def bottom_line_glue(claim: str, profile: ResolvedProfile | str, seeds=None,
                     device: str = "auto") -> dict:
    """{glue key: object} a chapter glues for its bottom-line box: ``bottom_line`` (the
    box's text, as Markdown for ``{glue:md}``), ``bottom_figure`` (its small figure,
    as a PNG image, the figure closed so that the cell shows nothing else) and, for a
    claim on the compute ladder, ``trend_figure`` (its decisions against compute)."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, Markdown

    from . import ladder_trend
    from .figure_text import png
    from .ledger import published_families
    families = published_families(profile, seeds, device)
    from ..studies.confirm_report import status_text
    confirmed = confirmatory_rows().get(claim)
    fig = headline_figure(claim, with_confirmatory(families))
    image = png(fig, dpi=100)
    plt.close(fig)
    trends = ladder_trend.claim_trends(ladder_trend.gather(), claim)
    out = {}
    if trends:
        fig = ladder_trend.figure(trends)
        out["trend_figure"] = Image(data=png(fig, dpi=100), format="png")
        plt.close(fig)
    return {**out, "bottom_line": Markdown(bottom_line(claim, families, confirmed, trends)),
            "bottom_figure": Image(data=image, format="png"),
            # the pre-registered test's progress, or its verdicts once complete, and
            # why Holm's verdict differs from the one at 5% (the verdict's own detail,
            # off the box's first lines)
            "confirm_status": Markdown(status_paragraph(claim, confirmed, status_text))}


def status_paragraph(claim: str, confirmed, status_text) -> str:
    """The paragraph under the box: ``status_text`` (the confirmatory test's progress,
    or what the box lacks once judged), then ``holm_note`` of the box's confirmatory
    decision where its verdict at 5% differs from Holm's."""
    note = holm_note(in_chapter_sign(claim, confirmed)) if confirmed is not None else ""
    parts = [status_text(claim) or ""] + ([f"{note}."] if note else [])
    return " ".join(p for p in parts if p)


def chapter_glue(claim: str, chapter, family: pd.DataFrame, prefix: str,
                 profile: ResolvedProfile | str, seeds=None, device: str = "auto") -> dict:
    """Everything a measured chapter's page glues, in one place: each decision's verdict
    sentence (under its key, '/' as '_'), the margins' rule and the chapter's own texts
    (under ``prefix``), and its bottom line (``bottom_line_glue``)."""
    from ..chapters.text import margins_text
    from .headlines import decision_text
    profile = resolve(profile)  # a notebook passes the name
    out = {f"{prefix}{key}": text for key, text in margins_text(profile).items()}
    out.update({d.key.replace("/", "_"): decision_text(d, family)
                for d in chapter.decisions})
    out.update({f"{prefix}{key}": text for key, text in chapter.texts.items()})
    out.update(bottom_line_glue(claim, profile, seeds, device))
    return out


def verdict_table(chapter, family: pd.DataFrame) -> pd.DataFrame:
    """A chapter's decisions at its profile in six columns, so that the page shows them
    open (``book.build.MAX_COLUMNS``; issue #41: "expand the verdict tables"): the
    difference with its 95% interval, the margin, the paper's side, the plain reading
    (after Holm's adjustment over the profile's family, with the reason where it is not
    testable), the verdict at 5% and the Holm verdict, each a word. The paper's figures,
    the method, the stages and the arms' levels stay in ``chapter.decision_table``."""
    from . import plain
    from ..stats.inference import GATED
    full = chapter.decision_table(family)
    readings, at_5, holm = [], [], []
    for d in chapter.decisions:
        gated = d.stage == GATED
        at_5.append("not testable" if gated else d.verdict())
        if d.key in family.index:
            row = family.loc[d.key]
            readings.append(plain.row_reading(row))
            holm.append("not testable" if row["stage"] == GATED else row["verdict_holm"])
        else:
            readings.append("outside Holm's family")
            holm.append("—")
    table = full[["ours", "margin", "paper's side"]].copy()
    table["plain reading"] = readings
    table["verdict at 5%"] = at_5
    table["after Holm"] = holm
    return table
