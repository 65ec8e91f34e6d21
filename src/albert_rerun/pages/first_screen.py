"""The book's answers in a few lines, the first screen of the introduction and the
ledger (issue #26: "which claims are reproduced?" and "how big and how long?"): each
measured claim with its plain reading first, the verdict word small beside it
(``at_a_glance``, an item each from ``glance_item``), the exact claims and the
throughput ranking glued from their chapters, the scale in a few sentences and the
confirmatory test's line.
"""
from __future__ import annotations

from ..profiles import resolve
from ..stats.inference import GATED
from ..chapters.text import times
from ..studies.decisions import capital
from .confirmatory import in_chapter_sign, secondary_words
from . import plain as PL
from .headlines import (CHAPTERS, EXTRA, EXTRA_NAMES, HEADLINES, PILOT, book_verdict,
                        GLOSSARY, chapter_link, numbers, short_stage, term)
from .scale import _count, scale_numbers

NAMES = {"asymmetry": "attention vs FFN sharing", "sop_nsp": "SOP vs NSP",
         "dropout": "dropout",
         "wall_clock": "a wide ALBERT vs BERT at an equal-time step budget",
         "transitions": "smoother transitions", "embedding_sweep": "a small E under sharing"}
# what a reader must know beside a claim's verdict (a reviewer: the before-Holm
# "reproduced" of SOP hid the cue; "equal time" was a step budget whose seconds differed)
CAVEATS = {"sop_nsp": "on pairs that keep the segment-cut cue, which a bag of words also "
                      "reads",
           "wall_clock": "the runs' seconds did not match, and the wide model's learning "
                         "rate came from a sweep whose rates had all yet to leave the early "
                         "loss plateau"}
# the plain readings in the order the list shows them (``plain.READINGS``)
ORDER = (PL.HOLDS, PL.TINY, PL.REVERSED, PL.REVERSED_TINY, PL.DIFFERS, PL.NO_DIFFERENCE,
         PL.UNDECIDED, PL.NOT_TESTABLE)


def linked_stage(row) -> str:
    """``short_stage`` with its terms linked to the glossary (a cold reader met "weakest
    arm at 92%" on the first screen, explained four screens later): 'early training
    (the stage): the weakest arm 92% of the way to the bigram rung'."""
    import re
    text = short_stage(row)
    match = re.fullmatch(r"(.*?): weakest arm at (-?\d+)%", text)
    if not match:
        return text
    return (f"{term('stage', match.group(1))}: the weakest arm {match.group(2)}% of the "
            f"way to the bigram {term('rung')}")


def lean(row) -> str:
    """Which side an undecided estimate leans to (amendment 8's promise; a cold reader
    could not tell which way the asymmetry pointed): '' where the paper predicts no
    difference or the estimate is 0."""
    estimate, paper = float(row["estimate"]), int(row.get("paper_sign", 0) or 0)
    if paper == 0 or estimate == 0:
        return ""
    side = "the paper's side" if (estimate > 0) == (paper > 0) else \
        "the other side from the paper's"
    return f"the estimate leans to {side}, but not clearly"


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first, a full stop last."""
    text = text.strip()
    return capital(text) + ("" if text.endswith(".") else ".")


def glance_item(claim: str, row, chapters: str = "", lead: str = "", beside: str = "",
                caveat: str | None = None, confirmatory: bool = False) -> tuple:
    """(reading, text) of one measured claim in ``at_a_glance``: its name and chapter,
    its plain reading with the verdict word beside it in small type (linked to the
    registration where ``confirmatory``), then short sentences: ``lead`` (where the
    verdict comes from, with its numbers), the claim's caveat (``caveat``, else the
    profile's ``CAVEATS``: they describe the profile's runs), ``beside`` (another
    source's reading) and, for a contradicted verdict, ``plain.SCALE_NOTE``. No "(at 5%
    before Holm: ...)": that detail is the verdict's own section's."""
    reading = PL.row_reading(row)
    link = chapter_link(chapters, CHAPTERS[claim])
    head, colon, reason = reading.partition(": ")
    text = (f"{sentence(NAMES[claim])[:-1]} ({link}): **{head}**{colon}{reason} "
            f"{PL.registered_word(row, confirmatory)}.")
    if book_verdict(row) == "contradicted":  # the registration's promise (section 8)
        text += f" {PL.SCALE_NOTE}"
    caveat = CAVEATS.get(claim, "") if caveat is None else caveat
    notes = [lead, lean(row) if head == PL.UNDECIDED else ""] \
        + ([caveat] if caveat and row["stage"] != GATED else []) + [beside]
    text += "".join(f" {sentence(n)}" for n in notes if n)
    return head, text


def at_a_glance(families: dict, chapters: str = "", confirm_line: str = "",
                confirmed: dict | None = None, extras: dict | None = None,
                secondary: dict | None = None) -> str:
    """The answers in a few lines, for the first screen of the introduction and the
    ledger (issue #26: "which claims are reproduced?" and "how big and how long?"):
    the exact claims' verdicts (glued from chapters 1 and 2), each measured claim with
    its plain reading at the book's profile (the first of ``families``), in the order of
    ``ORDER``, the throughput ranking (glued from chapter 6), the scale in a few
    sentences and the confirmatory test's progress (``confirm_line``). ``extras``: the
    other primary decisions (``confirmatory_extras``), each an item of its own;
    ``secondary``: the registered secondary rows of the claims without a primary one
    (``confirmatory_secondary``), beside their profile verdict, labelled exploratory."""
    profile = next(iter(families))
    family = families[profile]
    one, two = f"{chapters}01_embedding_share", f"{chapters}02_sharing_reductions"
    six = f"{chapters}06_wall_clock"
    if confirmed:
        judged = family[family["in_family"]] if "in_family" in family else family.iloc[:0]
        n = int(judged["n_seeds"].max()) if len(judged) else 0
        lines = [f"**In short.** Chapters 3 to 6 are judged by the pre-registered "
                 f"{term('confirmatory')} test "
                 f"({int(next(iter(confirmed.values()))['n_seeds'])} fresh seeds). "
                 f"Chapters 7 and 8 are judged by the `{profile}` {term('profile')}"
                 + (f" ({n} seeds, exploratory)" if n else " (exploratory)")
                 + f", chapters 1 and 2 by exact counts. The {term('pilot')} `{PILOT}` "
                 f"is in the table below.", ""]
    else:
        lines = [f"**In short**, at `{profile}` (the published {term('profile')}; the "
                 f"{term('pilot')} `{PILOT}` is in the table below):", ""]
    lines.append(f"- **By counting** (exact): the embedding share, "
                 f"**{{glue:text}}`{one}.ipynb::embedding_share_verdict:s`** "
                 f"({chapter_link(chapters, '01_embedding_share')}); what sharing removes, "
                 f"**{{glue:text}}`{two}.ipynb::sharing_verdict:s`** "
                 f"({chapter_link(chapters, '02_sharing_reductions')}).")
    items = []
    confirmed = confirmed or {}
    for claim, h in HEADLINES.items():
        if claim in confirmed:  # the pre-registered test decides; the profile beside it
            row = in_chapter_sign(claim, confirmed[claim])
            lead = (f"confirmatory, {int(row['n_seeds'])} fresh seeds: {numbers(row)}; "
                    f"{linked_stage(row)}")
            beside = (f"`{profile}` (exploratory): {PL.row_reading(family.loc[h.key])}"
                      if h.key in family.index else "")
            # the box carries the whole caveat; the list the short one, but equal time
            # keeps its whole caveat here too (amendment 6.5)
            short = row.get("caveat_short", "") if claim != "wall_clock" else ""
            items.append(glance_item(claim, row, chapters, lead, beside,
                                     caveat=short if isinstance(short, str) and short
                                     else row.get("caveat", ""), confirmatory=True))
        elif h.key in family.index:
            items.append(glance_item(claim, family.loc[h.key], chapters,
                                     beside=secondary_words((secondary or {}).get(claim,
                                                                                  []))))
        for key, (owner, _) in EXTRA.items():
            if owner == claim and key in (extras or {}):
                row = extras[key]
                head = PL.row_reading(row).partition(": ")[0]
                items.append((head, (
                    f"{sentence(EXTRA_NAMES[key])[:-1]} ({chapter_link(chapters, CHAPTERS[claim])}): "
                    f"**{head}** {PL.registered_word(row, True)}. Confirmatory, "
                    f"{int(row['n_seeds'])} fresh seeds, {row['label']}: {numbers(row)}; "
                    f"{linked_stage(row)}.")))
    judged = family[family["in_family"]] if "in_family" in family else family.iloc[:0]
    seeds = int(judged["n_seeds"].max()) if len(judged) else 0
    why = (f" Each condition has {seeds} seeds. Holm's adjustment runs over the "
           f"profile's {2 * len(judged)} tests: its strictest step asks p < "
           f"{holm_of(family):.2g}." if len(judged) else "")
    if confirmed:  # the verdicts of chapters 3 to 6 come from the confirmatory family
        first = next(iter(confirmed.values()))
        tests = max(1, int(first.get("holm_tests", 2 * len(confirmed))))
        why = (f" Holm's adjustment runs over the confirmatory test's {tests} primary "
               f"tests (strictest step p < {0.05 / tests:.2g})"
               + (f" and over `{profile}`'s {2 * len(judged)} tests (p < "
                  f"{holm_of(family):.2g})" if len(judged) else "") + ".")
    lines.append(f"- **Measured**: each claim's headline comparison. Its plain reading "
                 f"({{doc}}`{'' if chapters == 'chapters/' else '../'}{GLOSSARY}`) comes first, the verdict after {term('Holm')}'s adjustment "
                 f"beside it in small type.{why}")
    rank = {reading: k for k, reading in enumerate(ORDER)}
    for _, item in sorted(items, key=lambda x: rank.get(x[0], len(ORDER))):
        lines.append(f"  - {item}")
    lines.append(f"- **Throughput ranking** ({chapter_link(chapters, '06_wall_clock')}, "
                 f"a measurement): {{glue:text}}`{six}.ipynb::throughput_short:s`.")
    n = scale_numbers(resolve(profile))  # the families are keyed by name
    if confirmed:  # the headline verdicts' runs first (a reviewer: the cpu scale stood
        # beside the confirmatory verdicts, whose runs are the pilot's size)
        c = scale_numbers(resolve(PILOT))
        seeds = int(next(iter(confirmed.values()))["n_seeds"])
        lines.append(f"- **Scale of the confirmatory runs** (the `{PILOT}` sizes): one has "
                     f"{c['params'] / 1e6:.2f}M parameters, "
                     f"{times(c['paper_params'] / c['params'])} fewer than ALBERT-base's "
                     f"{c['paper_params'] / 1e6:.0f}M. It trains {c['steps']:,} steps on "
                     f"{_count(c['tokens'])} "
                     f"tokens ({times(c['paper_tokens'] / c['tokens'])} fewer than "
                     f"ALBERT-base's {_count(c['paper_tokens'])}). That is "
                     f"{times(c['paper_flops'] / c['flops'])} less compute. Each condition "
                     f"has {seeds} seeds.")
    where = f" at `{profile}`" if confirmed else ""
    lines.append(f"- **Scale**{where}: one base run here has {n['params'] / 1e6:.2f}M "
                 f"parameters, {times(n['paper_params'] / n['params'])} fewer than "
                 f"ALBERT-base's {n['paper_params'] / 1e6:.0f}M. It trains on "
                 f"{_count(n['tokens'])} tokens, {times(n['paper_tokens'] / n['tokens'])} "
                 f"fewer than the paper's {_count(n['paper_tokens'])}, with "
                 f"{times(n['paper_flops'] / n['flops'])} less compute. Every model is "
                 f"{term('stage', 'early in training')}.")
    if confirm_line:
        lines.append(f"- {confirm_line}")
    return "\n".join(lines)


def holm_of(family) -> float:
    """Holm's first-step alpha of a whole family (its judged decisions, two tests each)."""
    from ..stats.power import holm_alpha
    return holm_alpha(family)
