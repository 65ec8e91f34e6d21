"""The claims ledger (chapter 9): every chapter's decisions as one family per profile,
adjusted with Holm over the profile's decisions (``book_family``), the profiles whose
stored results cover the whole book (``published_families``), and what the ledger's page
shows of them: one table of every decision at every profile (``ledger_table``), its
figures (``ledger_figures``), every column behind them as a CSV (``csv_link``) and the
values it glues (``ledger_glue``). Its functions take the profile resolved
(``profiles.ResolvedProfile``); those a notebook calls also take a name. The families it
returns are keyed by name."""
from __future__ import annotations

import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..studies import conditions as C
from ..studies.decisions import MissingRuns, interval_text, signed, unit_digits
from ..stats.inference import holm, is_interim
from .asymmetry import asymmetry
from .downstream import downstream_gate
from .dropout import dropout
from .embedding_size import embedding_sweep
from .sop_nsp import sop_nsp
from .text import machines_text
from .transitions import transitions
from .wall_clock import wall_clock

CHAPTERS = {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
            "wall_clock": wall_clock, "transitions": transitions,
            "embedding_sweep": embedding_sweep, "downstream": downstream_gate}
# Masked positions per 512-token sequence: the official code's default
# max_predictions_per_seq (whether the paper's runs used it is not stated).
PAPER_MASKED = 20


def store_state() -> tuple:
    """Every file under the results root ($ALBERT_RERUN_RESULTS, else data/results) as
    (path, size, mtime): the state a profile's decisions are computed from (a profile's
    own store, and the cpu store that cpu-long's equal-time budget and planned family
    read). About 500 files for the committed results, a few milliseconds. Checkpoints
    and logs are left out: no decision reads them, and a run training beside a build
    rewrites its checkpoint every few minutes."""
    import os

    from ..engine.store import results_dir
    root = results_dir("cpu").parent
    state = []
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in ("checkpoints", "logs")]
        for name in files:
            path = os.path.join(folder, name)
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # a temporary file renamed meanwhile
                continue
            state.append((path, stat.st_size, stat.st_mtime_ns))
    return str(root), tuple(sorted(state))


_DECISIONS: dict = {}  # (arguments, store_state()) -> decisions; see book_decisions


def book_decisions(profile: ResolvedProfile | str, seeds=None, device="auto",
                   train_missing=False) -> list:
    """Every decision of the book at ``profile``: the family the ledger adjusts (the
    chapters' tables and downstream summaries are not built for it). A profile trained
    in stretches (``conditions.STRETCH_PROFILES``) gives the decisions of its claims whose
    runs are all stored so far; a chapter with none is left out.

    Computed once per state of the results store in a process: a chapter's page asks
    for the same profiles' decisions several times (its own family, the profiles it
    shows beside it, a stretch profile's planned family from cpu's), about 12 s of CPU
    each at cpu. The key is the store's every file with its size and modification time
    (``store_state``), so a run written or removed, by this process or another, is a new
    state; a call that trains what is missing is keyed on the state it leaves."""
    profile = resolve(profile)
    key = (profile, None if seeds is None else tuple(seeds), str(device), bool(train_missing))
    cached = _DECISIONS.get((key, store_state()))
    if cached is not None:
        return list(cached)
    out = _book_decisions(profile, seeds, device, train_missing)
    if len(_DECISIONS) > 32:
        _DECISIONS.clear()
    _DECISIONS[(key, store_state())] = tuple(out)
    return list(out)


def _book_decisions(profile: ResolvedProfile, seeds, device, train_missing) -> list:
    out = []
    partial = profile.name in C.STRETCH_PROFILES
    claims = set(C.profile_claims(profile)) | {"downstream"}
    for claim, make in CHAPTERS.items():
        if claim not in claims and not (claim == "asymmetry" and "grouped" in claims):
            continue
        if not partial:
            out += make(profile, seeds, device, train_missing, present=False).decisions
            continue
        try:
            if claim == "downstream":
                chapter = make(profile, seeds, device, train_missing, present=False)
            else:
                chapter = make(profile, seeds, device, train_missing, present=False,
                               partial=True)
        except MissingRuns:
            continue
        out += chapter.decisions
    if partial:  # checks of the test sets compare no model: they are the cpu book's
        out = [d for d in out if d.arms]
    return out



def book_family(profile: ResolvedProfile | str, seeds=None, device="auto",
                train_missing=False) -> pd.DataFrame:
    """``book_decisions`` as one frame with the raw and the Holm-adjusted verdicts
    (stats.holm over the profile's judged decisions: those the competence gate lets
    through). Each profile is its own family. A profile still training in stretches is
    adjusted over its planned family (``planned_keys``): the decisions not yet made
    count as pending tests at p = 1, and its rows are marked ``interim``."""
    profile = resolve(profile)  # a notebook passes the name
    made = book_decisions(profile, seeds, device, train_missing)
    if profile.name not in C.STRETCH_PROFILES:
        return holm(made)
    planned = planned_keys(profile)
    family = holm(made, pending=len(set(planned) - {d.key for d in made}))
    if len(family) and still_training(profile):
        family["interim"] = True
        family["verdict_staged"] = "interim: " + family["verdict_staged"]
        family.attrs["planned"] = len(set(planned) | set(family.index))
        family.attrs["pending"] = len(set(planned) - set(family.index))
    return family


def source_decisions(profile: ResolvedProfile) -> list:
    """The decisions of a stretch profile's ``conditions.PLANNED_FROM`` profile, the book
    its plan is read from; [] where that profile's results are not stored (or the
    profile has no such source)."""
    if profile.name not in C.PLANNED_FROM:
        return []
    try:
        return book_decisions(resolve(C.PLANNED_FROM[profile.name]))
    except MissingRuns:
        return []


def pending_labels(profile: ResolvedProfile, claim: str, made) -> list:
    """The labels of ``claim``'s planned decisions at a stretch profile (``planned_keys``)
    not among ``made`` (keys): what its section at another profile's page still lacks
    (review: a decision waiting for its runs was left out without a word)."""
    keys = set(planned_keys(profile)) - set(made)
    return [d.label for d in source_decisions(profile) if d.key in keys and d.claim == claim]


def unplanned_labels(profile: ResolvedProfile, claim: str) -> list:
    """The labels of ``claim``'s decisions at a stretch profile's source profile
    (``conditions.PLANNED_FROM``) that the stretch profile does not plan (its arms are
    not trained there, by design), models' decisions only: what its sections leave out
    (review: they never said so)."""
    planned = set(planned_keys(profile))
    return [d.label for d in source_decisions(profile)
            if d.claim == claim and d.arms and d.key not in planned]


def planned_keys(profile: ResolvedProfile) -> list:
    """The decisions a profile trained in stretches makes once complete: those of its
    ``conditions.PLANNED_FROM`` profile's book (which trains a superset of its
    conditions) whose arms it trains, in the claims it carries; the base model's
    downstream test always. Empty where that profile's results are not stored."""
    reference = source_decisions(profile)
    trained = {claim: set(C.claim_conditions(profile, claim, 1.0))
               for claim in C.profile_claims(profile)}
    trained["downstream"] = {"base"}
    return [d.key for d in reference
            if d.arms and d.claim in trained and set(d.arms) <= trained[d.claim]]



def published_profiles(current: ResolvedProfile) -> list:
    """The profiles (resolved) whose stored results cover the whole book: ``current``
    first, then cpu and gpu where complete (a missing run leaves a profile out). The
    smoke profile, CI's, shows itself only, so that its committed outputs do not depend
    on which other results a checkout holds."""
    out = [current]
    if current.name == "smoke":
        return out
    for profile in map(resolve, ("cpu", "cpu-long", "gpu")):
        evaluated = profile.results / "eval"
        if (profile.name == current.name or not evaluated.is_dir()
                or not any(evaluated.iterdir())):
            continue
        try:
            if not book_decisions(profile):
                continue
        except MissingRuns:  # anything else is a bug, and stops the build (review: a
            continue         # KeyError here once hid a whole profile without a word)
        out.append(profile)
    return out


def published_families(current: ResolvedProfile | str, seeds=None, device="auto",
                       train_missing=False) -> dict:
    """{profile's name: its book_family} for each of ``published_profiles(current)``:
    ``current`` at ``seeds`` (training what is missing where ``train_missing``), the
    others at their profile's default seeds."""
    current = resolve(current)  # a notebook passes the name
    return {p.name: book_family(p, seeds if p is current else None, device,
                                train_missing and p is current)
            for p in published_profiles(current)}


def stacked(families: dict) -> pd.DataFrame:
    """The families of ``published_families`` in one frame with a ``profile`` column (what
    the forest plot and the compute panels draw)."""
    return pd.concat([family.assign(profile=p) for p, family in families.items()])



def training_hours(profile: ResolvedProfile) -> float:
    """Hours of pretraining the profile's stored runs recorded, all of them together."""
    from ..engine.store import read_json
    total = 0.0
    for path in (profile.results / "pretrain").glob("*.json"):
        run = read_json(path)
        total += run["metrics"]["train_seconds"] if run else 0.0
    return total / 3600



def training_compute(profile: ResolvedProfile | str) -> float:
    """Training FLOPs of one base run of the profile (model.params.useful_flops per step,
    times its steps)."""
    b = C.base(resolve(profile))
    return C.step_flops(b) * b.max_steps


def beside_sections(make, current: ResolvedProfile | str, seeds=None) -> list:
    """What a chapter shows under "the same decisions at other profiles": for each other
    profile with stored results, a heading (its scale, and for a profile training in
    stretches, its progress), its scale gap to the paper, and its decisions with the
    Holm verdict of that profile's own family (``book_family``); a profile none of
    whose decisions of this chapter is complete says so. At a profile still training,
    the checks of the test sets are left out: they compare no model and are the
    complete profile's. Items to ``display`` in order."""
    from IPython.display import Markdown
    out = []
    for profile in published_profiles(resolve(current))[1:]:
        partial = profile.name in C.STRETCH_PROFILES
        progress = f"; {stretch_progress(profile)}" if partial else ""
        interim = still_training(profile)
        try:
            chapter = make(profile, None, "auto", False, present=False,
                           **({"partial": True} if partial else {}))
        except MissingRuns:
            out.append(Markdown(f"**{profile.name}**"
                                + (f" ({progress[2:]})" if progress else "")
                                + ": no decision of this chapter has all its runs stored "
                                  "yet."))
            continue
        if partial:
            chapter.decisions = [d for d in chapter.decisions if d.arms]
        waiting = (pending_labels(profile, chapter.claim, [d.key for d in chapter.decisions])
                   if interim else [])
        waiting = (f" Planned here and still waiting for their runs: {'; '.join(waiting)}."
                   if waiting else "")
        left = unplanned_labels(profile, chapter.claim) if partial else []
        waiting += (f" Not trained at this profile, by design (the "
                    f"{C.PLANNED_FROM[profile.name]} "
                    f"profile has them): {'; '.join(left)}." if left else "")
        out.append(Markdown(f"**{profile.name}** ({chapter.texts['scale_short']}{progress}). "
                            f"{chapter.texts.get('scale_gap', '')} "
                            f"{machines_text(chapter.runs)} "
                            f"{chapter.extra.get('beside_note', '')}".rstrip() + waiting))
        if not chapter.decisions:
            out.append(Markdown("No decision of this chapter has all its runs stored yet."))
            continue
        table = chapter.decision_table(book_family(profile))
        if interim:  # every verdict of a profile still training is interim
            column = "verdict at 5%, unadjusted"
            table[column] = "interim: " + table[column]
        out.append(table)
    return out


def _stretch_runs(profile: ResolvedProfile) -> list:
    """Every seeded pretraining run a profile plans, at its stored wide learning rate."""
    from ..engine.store import read_json
    from ..studies.driver import _sweep_choice, planned_runs
    chosen = read_json(_sweep_choice(profile))
    return planned_runs(profile, C.default_seeds(profile), None,
                        chosen["learning_rate"] if chosen else None)


def stretch_counts(profile: ResolvedProfile) -> dict:
    """What a profile trained in stretches has stored of its plan: {"runs", "trained",
    "evaluated", "controls", "controls_evaluated", "finetunings", "finetuned"}."""
    from ..engine.store import config_hash, stored_eval, stored_pretrain
    from ..studies.driver import finetune_targets, planned_controls
    store, evaluation = profile.results, profile.evaluation
    runs = _stretch_runs(profile)
    controls = planned_controls(runs)
    tuned = finetune_targets(profile, C.default_seeds(profile))

    def scored(config, how=evaluation) -> bool:
        return stored_eval(store, config_hash(config.to_dict()), how) is not None
    tuning = profile.finetune_config()
    return {"runs": len(runs), "trained": sum(stored_pretrain(store, r) is not None
                                              for r in runs),
            "evaluated": sum(scored(r) for r in runs), "controls": len(controls),
            "controls_evaluated": sum(scored(c) for c in controls),
            "finetunings": len(tuned), "finetuned": sum(scored(c, tuning) for c in tuned)}


def still_training(profile: ResolvedProfile) -> bool:
    """Whether a profile trained in stretches lacks any planned run, evaluation, control
    or fine-tuning: then its verdicts are interim. A complete one is judged as any other
    (its family is then its planned family, with nothing pending)."""
    return profile.name in C.STRETCH_PROFILES and not _complete(stretch_counts(profile))


def _complete(n: dict) -> bool:
    """Whether ``stretch_counts`` says every planned item is stored."""
    return (n["trained"] == n["evaluated"] == n["runs"]
            and n["controls_evaluated"] == n["controls"]
            and n["finetuned"] == n["finetunings"])


def stretch_progress(profile: ResolvedProfile) -> str:
    """'12 of 30 runs trained, 12 evaluated; 18 of 24 random-init controls evaluated;
    6 of 6 fine-tunings; still training in stretches' for a profile trained in
    stretches: what its interim decisions stand on ('complete' once all is stored)."""
    n = stretch_counts(profile)
    return (f"{n['trained']} of {n['runs']} runs trained, {n['evaluated']} evaluated; "
            f"{n['controls_evaluated']} of {n['controls']} random-init controls evaluated; "
            f"{n['finetuned']} of {n['finetunings']} fine-tunings"
            + ("; complete" if _complete(n) else
               "; still training in stretches, so its verdicts are interim"))




# -- the ledger's page --------------------------------------------------------------------

def _turn(row, flip: bool):
    """``row`` with its difference turned where ``flip`` (estimate and interval negated,
    'A minus B' read 'B minus A'), then its label read 'A vs B'."""
    import re
    row = row.copy()
    if flip:
        row["estimate"], row["low"], row["high"] = (-float(row["estimate"]),
                                                    -float(row["high"]), -float(row["low"]))
        row["label"] = re.sub(r"(^|, |: )([^,:]+?) minus ([^,:]+)", r"\1\3 minus \2",
                              str(row["label"]), count=1)
    row["label"] = str(row["label"]).replace(" minus ", " vs ")
    return row


def shown(families: dict) -> pd.DataFrame:
    """``stacked(families)`` as the page shows it (``_turn``): every row paper-positive
    (a row the paper signs -1 turned, its paper sign then +1). A row where the paper says there is no difference and whose interval lies wholly
    above 0 at the first profile that has it ('bag of words on SOP pairs minus
    majority') is turned at every profile, so that a positive number never reads as
    the paper's side where it goes against the paper."""
    frame = stacked(families)
    first = frame[~frame.index.duplicated()]
    flip = {k: int(r["paper_sign"]) < 0 or int(r["paper_sign"]) == 0 and float(r["low"]) > 0
            for k, r in first.iterrows()}
    out = pd.DataFrame([_turn(r, flip[k]) for k, r in frame.iterrows()])
    out.loc[out["paper_sign"] < 0, "paper_sign"] = 1
    return out


def reading_label(row) -> str:
    """The row's one label: its plain reading's head, and 'after Holm's adjustment'
    where the reading shows no difference though the 95% interval beside it excludes 0
    (``headlines.answer``)."""
    from .headlines import answer
    a = answer(row)
    return a["reading"] + (f" {a['holm_only']}" if a["holm_only"] else "")


def _profile_head(profile: str, family: pd.DataFrame) -> str:
    return profile + (" (interim)" if any(is_interim(r) for _, r in family.iterrows()) else "")


def _difference(row) -> str:
    """'+0.024 [-0.003, +0.051]', or '-0.058 (one seed)' where there is no interval."""
    import math
    if math.isfinite(row["low"]) and math.isfinite(row["high"]):
        return interval_text(row["estimate"], row["low"], row["high"], row["unit"])
    return f"{signed(row['estimate'], unit_digits(row['unit']))} (one seed)"


def ledger_table(families: dict) -> pd.DataFrame:
    """One row per decision (its chapter, 'A vs B', its margin) and a column per profile
    of ``families``: the paper-positive difference with its 95% interval, then the plain
    reading (``reading_label``); '-' where the profile does not make that decision."""
    from .figures import CLAIM_TITLES
    frame = shown(families)
    frame["cell"] = [f"{_difference(r)} {reading_label(r)}" for _, r in frame.iterrows()]
    heads = {p: _profile_head(p, f) for p, f in families.items()}
    table = frame.reset_index(names="key").pivot(index="key", columns="profile",
                                                 values="cell")
    first = frame[~frame.index.duplicated()]
    table = table.reindex(index=first.index, columns=list(families)).fillna("-")
    table.index = pd.MultiIndex.from_arrays(
        [first["claim"].map(CLAIM_TITLES), first["label"],
         [f"±{m:.2g} {u}" for m, u in zip(first["margin"], first["unit"])]],
        names=["claim", "decision", "margin"])
    return table.rename(columns=heads).rename_axis(columns=None)


def reading_counts(family: pd.DataFrame) -> pd.Series:
    """The decisions of one profile counted by plain reading's head, in
    ``plain.READING_WORDS``' order, those present."""
    from .plain import READING_WORDS, row_reading
    heads = family.apply(lambda r: row_reading(r).partition(": ")[0], axis=1).value_counts()
    return heads.reindex([w for w in READING_WORDS if w in heads.index])


def reading_summary(family: pd.DataFrame) -> str:
    """'3 holds here, 12 undecided, 2 not testable here': the decisions by reading."""
    return ", ".join(f"{int(n)} {word}" for word, n in reading_counts(family).items())


def paper_figure(text) -> str:
    """The paper's figure turned to the book's sign: every signed figure is the paper's
    own direction, so it reads positive ('-1.5 Avg', the cost of sharing, reads '+1.5
    Avg'); unsigned ones ('52.0 (chance 50)', words) are kept."""
    text = str(text)
    return "+" + text[1:] if text[:1] in ("-", "\u2212") and text[1:2].isdigit() else text


def ledger_csv(families: dict) -> str:
    """Every column behind the ledger's table, a row per decision and profile: the
    family's own (the registered sign and order, the verdicts, p-values, stage and gate,
    the arms' levels), the paper-positive difference, the plain reading with its reason,
    the paper's figure in the book's sign, what the numbers say, and for a paired-t
    decision its power reading (``stats.power.power_table``). Numbers to 4 significant
    digits."""
    from ..stats import power
    from .plain import row_reading
    from .text import reading
    raw = stacked(families)
    turned = shown(families)
    out = raw.assign(
        decision=turned["label"].to_numpy(),
        **{f"{k} (paper-positive)": turned[k].to_numpy() for k in ("estimate", "low", "high")},
        plain_reading=[row_reading(r) for _, r in raw.iterrows()],
        paper_positive_figure=[paper_figure(p) for p in raw["paper"]],
        what_the_numbers_say=[reading(r) for _, r in raw.iterrows()],
        arms=[" / ".join(a) for a in raw["arms"]])
    detect = pd.concat([power.power_table(f[f["in_family"]], alpha="holm").assign(profile=p)
                        for p, f in families.items()])
    detect = detect.drop(columns=["comparison", "unit", "margin"]).add_prefix("power: ")
    out = out.reset_index(names="key").merge(
        detect.reset_index(names="key"), how="left",
        left_on=["key", "profile"], right_on=["key", "power: profile"])
    return out.drop(columns="power: profile").to_csv(index=False, float_format="%.4g")


def csv_link(families: dict, name: str):
    """A link that downloads ``ledger_csv(families)`` as ``name``: the file travels in
    the page (a data URL), so the page needs no file beside it."""
    import base64
    from IPython.display import HTML
    data = base64.b64encode(ledger_csv(families).encode()).decode()
    return HTML(f'<a download="{name}" href="data:text/csv;base64,{data}">{name}</a>')


def ledger_figures(families: dict, max_rows: int = 12) -> list:
    """The ledger's figures (``figures.forest``): every decision at every profile, in
    margins, the paper's side right; the chapters in order, as many to a figure as keep
    it within ``max_rows`` rows."""
    from .figures import CLAIM_TITLES, forest
    frame = shown(families)
    frame["source"] = [_profile_head(p, families[p]) for p in frame["profile"]]
    frame["row"] = frame["label"]
    parts, rows = [[]], 0
    for claim in dict.fromkeys(frame["claim"]):
        n = frame.loc[frame["claim"] == claim, "row"].nunique()
        if parts[-1] and rows + n > max_rows:
            parts.append([])
            rows = 0
        parts[-1].append(claim)
        rows += n
    return [forest(frame[frame["claim"].isin(claims)],
                   title=" · ".join(CLAIM_TITLES.get(c, c) for c in claims))
            for claims in parts if claims]


def seeds_table(family: pd.DataFrame) -> pd.DataFrame:
    """What the profile's seeds can detect (``stats.power.power_table`` at Holm's
    first-step alpha), one row per paired-t decision in nats: the seeds, the smallest
    difference detected with an 80% chance in margins, the seeds that detect one
    margin, and the TOST's power at a true difference of 0."""
    from ..stats import power
    table = power.power_table(family[family["in_family"]], alpha="holm")
    table = table[table["unit"] == "nats"]
    table.index = table["comparison"].astype(str).str.replace(" minus ", " vs ")
    columns = {"seeds": "seeds", "in margins": "detectable (margins)",
               "seeds to detect the margin": "seeds for one margin",
               "TOST power at a true 0": "TOST power at 0"}
    return table[list(columns)].rename(columns=columns).rename_axis("decision").round(2)


def ledger_glue(families: dict, profile: str, n_seeds: int) -> dict:
    """The values the ledger's page glues (and the methods page reads from it): the
    counts by reading, the profiles shown, the fine-tuning grid and repeats, the power
    sentence, the seeds. ``families``: ``published_families``; ``profile``: the
    notebook's, by name."""
    from ..profiles import PROFILES
    from ..stats import power
    from .downstream import finetune_repeat_text, finetune_repeats
    from .text import finetune_grid_text
    family, profiles = families[profile], list(families)
    judged = power.power_table(family[family["in_family"]], alpha="holm")
    return {
        "ledger_counts": reading_summary(family),
        "ledger_profiles": ", ".join(profiles),  # glue:text shows backticks raw
        "ft_grid": finetune_grid_text(resolve(profile)),
        "ledger_power": power.power_sentence(judged[judged["unit"] == "nats"],
                                             "cross-entropy decisions"),
        "ledger_seeds": str(PROFILES["cpu"].default_seeds),
        "ledger_sd_uncertainty": power.sd_uncertainty(n_seeds),
        "ft_repeats": finetune_repeat_text(finetune_repeats(profiles))
        or "No model was fine-tuned at two profiles."}


def hours_text(profile: ResolvedProfile) -> str:
    """The hours of pretraining the profile's stored runs took, to a tenth: a time, so
    it differs by machine and load (the notebook glues it in a cell nbval does not
    compare)."""
    return f"{training_hours(profile):.1f}"
