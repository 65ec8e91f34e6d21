"""The book's answers as one Markdown table (issue #26): the question, the paper, ours
at each profile (the confirmatory result first where it is judged), the verdict and the
chapter; the exact claims' rows and the throughput ranking's row glued from their
chapters.
"""
from __future__ import annotations

from .confirmatory import CONFIRMATORY, confirmatory_headline
from .headlines import (CHAPTERS, EXTRA, HEADLINES, Headline, book_verdict, chapter_link,
                        numbers, shown_direction)
from .plain import SCALE_NOTE, reading_with_word


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def exact_rows(chapters: str = "") -> list:
    """The exact claims' rows of ``results_table``: their figures glued from chapters 1
    and 2 (``{glue:text}`` across pages, from ``chapters``)."""
    one, two = f"{chapters}01_embedding_share", f"{chapters}02_sharing_reductions"

    def g(doc, key, fmt="s"):
        return f"{{glue:text}}`{doc}.ipynb::{key}:{fmt}`"
    return [
        "| How large a share of BERT-base are the embeddings, and what does factorizing "
        "them save? | not printed (21.8%, computed from BERT-base's layout); Table 3's counts | "
        f"{g(one, 'bert_embedding_share', '.1f')}%; {g(one, 'table3_matched', 'd')} of "
        f"{g(one, 'table3_rows', 'd')} counts matched | **{g(one, 'embedding_share_verdict')}** "
        f"(exact, by counting) | {chapter_link(chapters, '01_embedding_share')} |",
        "| How many parameters does sharing remove? | Tables 1 and 4's counts | "
        f"{g(two, 'counts_matched', 'd')} of {g(two, 'counts_total', 'd')} counts matched | "
        f"**{g(two, 'sharing_verdict')}** (exact, by counting) | "
        f"{chapter_link(chapters, '02_sharing_reductions')} |"]


def results_table(families: dict, chapters: str = "", exact_rows: list | None = None,
                  growth: dict | None = None) -> str:
    """The book's answers as one Markdown table of five columns: the question, the
    paper, ours (words and numbers, each profile), the plain reading with the verdict
    word beside it in small type (the confirmatory result first), the chapter.
    ``chapters``: the path prefix of the chapters' documents from the page that shows it
    ("chapters/" from the introduction, "" from the ledger). ``growth``: a sixth column,
    "as training grows", {claim or ``EXTRA`` key: text} (``ladder_trend.growth_cells``),
    "—" for a row off the compute ladder."""
    head = ["question", "the paper", "ours", "plain reading (verdict)", "chapter"]
    if growth is not None:
        head.insert(4, "as training grows")
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows += [_with_growth(r, None, growth) for r in exact_rows or []]
    confirmed = CONFIRMATORY in families
    extra = {c: (k, h) for k, (c, h) in EXTRA.items()}
    for claim, h in HEADLINES.items():
        mine = [_with_growth(r, claim, growth)
                for r in _result_rows(claim, h, families, chapters, confirmed)]
        if claim in extra and confirmed and extra[claim][0] in families[CONFIRMATORY].index:
            mine += [_with_growth(r, extra[claim][0], growth) for r in _result_rows(
                claim, extra[claim][1], {CONFIRMATORY: families[CONFIRMATORY]}, chapters,
                confirmed)]
        if mine and claim == "wall_clock":
            mine.append(_with_growth(throughput_row(chapters), None, growth))
        rows += mine
    return "\n".join(rows)


def _with_growth(row: str, key: str | None, growth: dict | None) -> str:
    """A table row with the "as training grows" cell before its last (the chapter)."""
    if growth is None:
        return row
    rest, _, chapter = row.rstrip().removesuffix("|").rstrip().rpartition(" | ")
    return f"{rest} | {_cell(growth.get(key, '—'))} | {chapter} |"


def _result_rows(claim: str, h: Headline, families: dict, chapters: str,
                 confirmed: bool) -> list:
    """``results_table``'s row of one headline ([] where no family measured it): the
    confirmatory result with its comparison's words (a reviewer: the sign flipped
    unlabelled between pages), then each profile's, marked exploratory beside it."""
    ours, verdicts = [], []
    for profile, family in families.items():
        if h.key not in family.index:
            continue
        row = family.loc[h.key]
        if profile == CONFIRMATORY:
            words = confirmatory_headline(claim) if claim in HEADLINES and \
                h is HEADLINES[claim] else h
            registered = row.get("registered_label", "")
            turned = (" (registered the other way round)"
                      if isinstance(registered, str) and registered
                      and registered != row["label"] else "")
            name = (f"{profile} ({int(row['n_seeds'])} fresh seeds), "
                    f"{row['label']}{turned}")
        else:
            name, words = (f"{profile} (exploratory)" if confirmed else profile), h
        short = row.get("caveat_short", "") if profile == CONFIRMATORY else ""
        said = shown_direction(row, words)
        ours.append(f"{name}: {said + ', ' if said else ''}{numbers(row)}"
                    + (f" ({short})" if isinstance(short, str) and short else ""))
        # the plain reading first, the verdict word small beside it; no "(at 5% before
        # Holm: ...)" here: that detail is the verdict's own section's
        verdicts.append(f"{profile}: {reading_with_word(row, profile == CONFIRMATORY)}"
                        + (f". {SCALE_NOTE[:-1]}" if book_verdict(row) == "contradicted"
                           else ""))
    if not ours:
        return []
    return ["| " + " | ".join(_cell(x) for x in (
        h.question, h.paper, "; ".join(ours), "; ".join(verdicts),
        chapter_link(chapters, CHAPTERS[claim]))) + " |"]


def throughput_row(chapters: str = "") -> str:
    """The throughput ranking's row (chapter 6's measurement, outside the family): the
    paper's Table 2 speedups, our rank correlation and verdict glued from chapter 6."""
    from .. import paper
    speed = paper.TABLE2_SPEEDUP
    doc = f"{chapters}06_wall_clock.ipynb"
    return ("| Does sharing make training faster? | data throughput against BERT-large: "
            f"ALBERT-base {speed['albert-base']}x, BERT-base {speed['bert-base']}x, "
            f"ALBERT-xxlarge {speed['albert-xxlarge']}x (Table 2) | "
            f"rank correlation with the paper's order of the six Table 1 models (1 = the "
            f"same order), on one CPU: {{glue:text}}`{doc}::throughput_rho_first:.2f` by "
            f"the pre-specified method, {{glue:text}}`{doc}::throughput_rho:.2f` by the "
            f"whole-step method chosen after it | "
            f"**{{glue:text}}`{doc}::throughput_short:s`** (a measurement, no seeds) | "
            f"{chapter_link(chapters, '06_wall_clock')} |")
