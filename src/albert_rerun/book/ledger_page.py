"""What the ledger's page (notebooks/09_ledger.md) glues and shows: its values
(``ledger_glue``), the profiles beside the book's (``profile_sections``), and the power
readings (``power_sections``).
"""
from __future__ import annotations

from ..profiles import ResolvedProfile, resolve


def ledger_glue(families: dict, profile: str, n_seeds: int) -> dict:
    """Everything the ledger's page glues: the verdict counts, the profiles shown, the
    fine-tuning grid, the power sentence, the seeds and the fine-tuning repeats.
    ``families``: ``ledger.published_families``, keyed by name; ``profile``: the
    notebook's, by name."""
    from ..profiles import PROFILES
    from . import ledger
    from ..stats import power
    from .downstream import finetune_repeat_text, finetune_repeats
    from .text import finetune_grid_text
    family, profiles = families[profile], list(families)
    resolved = resolve(profile)
    judged = power.power_table(family[family["in_family"]], alpha="holm")
    return {
        "ledger_counts": ledger.reading_summary(family),
        "ledger_profiles": ", ".join(profiles),  # glue:text shows backticks raw
        "ft_grid": finetune_grid_text(resolved),
        "ledger_power": power.power_sentence(judged[judged["unit"] == "nats"],
                                             "cross-entropy decisions"),
        "ledger_seeds": str(PROFILES["cpu"].default_seeds),
        "ledger_sd_uncertainty": power.sd_uncertainty(n_seeds),
        "ft_repeats": finetune_repeat_text(finetune_repeats(profiles))
        or "No model was fine-tuned at two profiles."}


def profile_sections(families: dict, current: str) -> list:
    """What the ledger shows of the profiles beside the book's: each one's counts and
    table, the decisions whose verdict or stage changes between two of them, and a
    profile still training with no decision complete yet, its runs so far. ``families``
    are keyed by name, ``current`` is the notebook's name."""
    from IPython.display import Markdown

    from ..studies import conditions as C
    from . import ledger
    profiles, out = list(families), []
    for other in profiles[1:]:
        progress = (f" ({ledger.stretch_progress(resolve(other))})"
                    if other in C.STRETCH_PROFILES else "")
        out += [Markdown(f"**{other}**{progress}: {ledger.reading_summary(families[other])}."),
                ledger.findings_table(families[other])]
    for before, after in zip(profiles, profiles[1:]):
        out.append(Markdown(f"Changes between `{before}` and `{after}`: "
                            f"{ledger.changes_text(families, before, after)}"))
        moved = ledger.changes(families, before, after)
        if len(moved):
            out.append(moved)
    for other in C.STRETCH_PROFILES:  # a stretch profile with no decision complete yet
        if current != "smoke" and other not in profiles:
            stretch = resolve(other)
            out += [Markdown(f"**{other}**, training in stretches: "
                             f"{ledger.stretch_progress(stretch)}; no decision has all its "
                             f"runs yet. The runs evaluated so far:"),
                    ledger.stretch_summary(stretch)]
    return out


def power_sections(families: dict) -> list:
    """Each other profile's power reading: its sentence and its table."""
    from IPython.display import Markdown

    from ..stats import power
    out = []
    for other in list(families)[1:]:
        detect = power.power_table(families[other][families[other]["in_family"]],
                                   alpha="holm")
        nats = detect[detect["unit"] == "nats"] if len(detect) else detect
        out.append(Markdown(f"**{other}**: "
                            f"{power.power_sentence(nats, 'cross-entropy decisions')}"))
        if len(detect):
            out.append(detect.round(4))
    return out


def ledger_figures(families: dict) -> dict:
    """The ledger's figures, paper-positive (``ledger.paper_positive_frame``: the paper's
    side right in every panel), one forest and one compute figure per group of claims
    (``plots.parts``: issue #41, none with more than 12 rows or 8 legend entries), keyed
    ``forest_<i>`` and ``scale_<i>`` from 1, in ``plots.LEDGER_PARTS``' order; those
    keys the group has no decisions for get a figure that says so, so that the page's
    ``{glue:figure}`` directives always find theirs. ``families``: by profile name."""
    import matplotlib.pyplot as plt

    from . import ledger, plots
    combined = ledger.paper_positive_frame(ledger.stacked(families))
    compute = {p: ledger.training_compute(p) for p in families}
    paper = ledger.paper_compute()
    found = {tuple(dict.fromkeys(part["claim"])): part for part in plots.parts(combined)}
    out = {}
    for i, group in enumerate(plots.LEDGER_PARTS, start=1):
        part = next((p for claims, p in found.items() if set(claims) <= set(group)), None)
        if part is None:
            fig, ax = plt.subplots(figsize=(plots.WIDTH_IN, 0.6), dpi=100)
            ax.axis("off")
            ax.text(0.5, 0.5, f"No decision of {' or '.join(map(plots.claim_title, group))}"
                    f" is stored.", ha="center", va="center", fontsize=10)
            out[f"forest_{i}"] = out[f"scale_{i}"] = fig
            continue
        out[f"forest_{i}"] = plots.forest(part).figure
        out[f"scale_{i}"] = plots.scale_panel(part, compute, paper_compute=paper)[0].figure
    return out


def glue_ledger_figures(families: dict) -> None:
    """Glue ``ledger_figures`` for the page's ``{glue:figure}`` directives, each through
    ``figure_text.png`` (its text's size recorded) and closed, so that the cell shows
    nothing."""
    import matplotlib.pyplot as plt
    from myst_nb import glue
    figures = ledger_figures(families)
    for key, fig in figures.items():
        glue(key, fig, display=False)
    for fig in set(figures.values()):
        plt.close(fig)


def hours_text(profile: ResolvedProfile) -> str:
    """The hours of pretraining the profile's stored runs took, to a tenth: a time, so
    it differs by machine and load (the notebook glues it in a cell nbval does not
    compare)."""
    from . import ledger
    return f"{ledger.training_hours(profile):.1f}"
