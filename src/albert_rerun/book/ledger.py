"""The claims ledger (chapter 9): every chapter's decisions as one family, adjusted with
Holm over the book (``book_family``), its table and counts, the profiles whose stored
results cover the whole book, and the compute the runs took. Its functions take the
profile resolved (``profiles.ResolvedProfile``); those a notebook calls (``book_family``,
``published_families``, ``beside_sections``, ``training_compute``) and the cached
``book_decisions`` also take a name. The families it returns are keyed by name."""
from __future__ import annotations

import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..studies import conditions as C
from .asymmetry import asymmetry
from ..studies.decisions import MissingRuns, agree
from .downstream import downstream_gate
from .dropout import dropout
from .embedding_size import embedding_sweep
from .sop_nsp import sop_nsp
from ..stats.inference import EARLY, GATED, NO_MODEL, PAST, holm, is_interim
from .transitions import transitions
from .text import machines_text, reading
from .plain import row_reading, size
from .wall_clock import wall_clock


CHAPTERS = {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
            "wall_clock": wall_clock, "transitions": transitions,
            "embedding_sweep": embedding_sweep, "downstream": downstream_gate}


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
    runs are all stored so far; a chapter with none is left out. Each decision carries
    its arms' training FLOPs (``costed``).

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
            out += costed(make(profile, seeds, device, train_missing, present=False), profile)
            continue
        try:
            if claim == "downstream":
                chapter = make(profile, seeds, device, train_missing, present=False)
            else:
                chapter = make(profile, seeds, device, train_missing, present=False,
                               partial=True)
        except MissingRuns:
            continue
        out += costed(chapter, profile)
    if partial:  # checks of the test sets compare no model: they are the cpu book's
        out = [d for d in out if d.arms]
    return out


def arm_configs(chapter, profile: ResolvedProfile) -> dict:
    """{condition name: config} of a chapter's arms at ``profile``: the wall-clock
    chapter's own conditions (they depend on its sweep and timing), the base run for the
    downstream test, Table 4's cells and the grouped models (``G=<g>``, as the chapter
    names them) for the asymmetry chapter, else the claim's ``conditions``."""
    if "conditions" in chapter.extra:
        return dict(chapter.extra["conditions"])
    if chapter.claim == "downstream":
        return {"base": C.base(profile)}
    if chapter.claim == "asymmetry":
        groups = C.grouped(profile) if "grouped" in C.profile_claims(profile) else {}
        return {**C.asymmetry(profile), **{f"G={g}": c for g, c in groups.items()}}
    return C.claim_conditions(profile, chapter.claim)


def costed(chapter, profile: ResolvedProfile) -> list:
    """The chapter's decisions, each with ``train_flops``: the training FLOPs of one run
    of its costlier arm (``conditions.step_flops`` times its steps), where the compute
    panels place it. The larger, not the mean: the compute the comparison had to reach
    (the wide model against the BERT-style one at equal time is placed at the wide
    model's). A decision about no trained model keeps NaN; an arm the chapter's
    conditions do not name is a bug and stops the build."""
    from dataclasses import replace
    configs = arm_configs(chapter, profile)
    out = []
    for d in chapter.decisions:
        unknown = [a for a in d.arms if a not in configs]
        if unknown:
            raise ValueError(f"decision {d.key!r}: arms {unknown} are not among the "
                             f"{chapter.claim} conditions at profile {profile.name!r}")
        flops = [C.step_flops(configs[a]) * configs[a].max_steps for a in d.arms]
        out.append(replace(d, train_flops=max(flops)) if flops else d)
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


CLAIM_TITLES = {
    "asymmetry": ("3", "Sharing attention is nearly free; sharing the FFN costs (Table 4)",
                  "03_asymmetry"),
    "sop_nsp": ("4", "SOP beats NSP; NSP models only topic (Table 5)", "04_sop_nsp"),
    "dropout": ("5", "Removing dropout helps (Table 8, Figure 2b)", "05_dropout"),
    "wall_clock": ("6", "The wide ALBERT wins at equal compute (Table 6)", "06_wall_clock"),
    "transitions": ("7", "Layer transitions are smoother under sharing (Figure 1)",
                    "07_transitions"),
    "embedding_sweep": ("8", "Not shared improves with E; all-shared best at a small E "
                             "(Table 3)", "08_embedding_size"),
    "downstream": ("-", "Pretraining helps downstream (the premise of every Avg column)",
                   "03_asymmetry"),
}


def _versus(label: str) -> str:
    """A decision's label without its registered order: 'A minus B' read 'A vs B'
    (its number beside it is paper-positive)."""
    return str(label).replace(" minus ", " vs ")


def paper_positive_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every difference turned so that positive is the paper's direction
    (a row the paper signs negative: estimate and interval negated, its paper sign +1)
    and each label read 'A vs B', for the figures that put the paper's side right."""
    frame = frame.copy()
    turned = frame["paper_sign"].astype(int) < 0
    frame.loc[turned, "estimate"] = -frame.loc[turned, "estimate"]
    frame.loc[turned, ["low", "high"]] = -frame.loc[turned, ["high", "low"]].to_numpy()
    frame.loc[turned, "paper_sign"] = 1
    frame["label"] = frame["label"].map(_versus)
    return frame


def _shown(row) -> tuple:
    """A row as the ledger's tables show it: its label read 'A vs B' and the row itself,
    except a row where the paper says there is no difference and whose interval lies
    wholly above 0, its first arm ahead ('bag of words on SOP pairs minus majority'):
    that one is turned ('majority vs bag of words on SOP pairs', numbers negated), so
    that a positive number never reads as the paper's direction where it goes against
    the paper."""
    label = str(row["label"])
    if (int(row["paper_sign"]) == 0 and label.count(" minus ") == 1
            and float(row["low"]) > 0):
        first, _, second = label.partition(" minus ")
        head, sep, first = first.rpartition(": ")  # 'SOP pairs, probe: A minus B'
        row = row.copy()
        row["estimate"], row["low"], row["high"] = (-float(row["estimate"]),
                                                    -float(row["high"]), -float(row["low"]))
        return f"{head}{sep}{second} vs {first}", row
    return _versus(label), row


def paper_figure(text) -> str:
    """The paper's figure turned to the book's sign: every signed figure is the paper's
    own direction, so it reads positive ('-1.5 Avg', the cost of sharing, reads '+1.5
    Avg'); unsigned ones ('52.0 (chance 50)', words) are kept."""
    text = str(text)
    for minus in ("-", "\u2212"):
        if text.startswith(minus) and text[1:2].isdigit():
            return "+" + text[1:]
    return text


def _label(row) -> str:
    """The row's one label: its plain reading, and 'after Holm (the interval excludes 0
    before)' where it shows no difference though its 95% interval excludes 0
    (``headlines.one_label``), so that no label contradicts the interval beside it."""
    from .headlines import answer, one_label
    reading = row_reading(row)
    if reading.partition(": ")[0] in ("undecided", "no difference here"):
        return one_label(answer(row))
    return reading


def findings_table(family: pd.DataFrame) -> pd.DataFrame:
    """One row per decision, grouped by claim: ours, paper-positive, with its margin and
    its one label, the plain reading (``plain.row_reading``; ``_label``)."""
    rows = []
    for _, row in family.iterrows():
        number, title, _ = CLAIM_TITLES[row["claim"]]
        label, shown = _shown(row)
        rows.append({"#": number, "claim": title, "decision": label,
                     "ours (positive: the paper's direction)": size(shown),
                     "margin": f"±{row['margin']:.3g}", "plain reading": _label(row)})
    return pd.DataFrame(rows).set_index(["#", "claim", "decision"])


def ledger_table(family: pd.DataFrame) -> pd.DataFrame:
    """``findings_table`` with the paper's figure (turned to the book's sign,
    ``paper_figure``), the arms' levels, the verdicts at 5% and after Holm with the
    stage, and what the numbers say."""
    table = findings_table(family)
    table.insert(0, "paper (positive: its direction)", [paper_figure(p) for p in family["paper"]])
    table["arms' level"] = [r["arm_levels"] or "no trained model"
                            for _, r in family.iterrows()]
    table["verdict"] = [("interim: " if is_interim(r) else "") + r["verdict"]
                        for _, r in family.iterrows()]
    table["verdict (Holm) and stage"] = list(family["verdict_staged"])
    table["what the numbers say"] = [reading(r) for _, r in family.iterrows()]
    return table


def reading_counts(family: pd.DataFrame) -> pd.DataFrame:
    """The decisions counted by plain reading (columns, in ``plain.READING_WORDS``'
    order, those present) and stage (rows)."""
    from .plain import READING_WORDS
    heads = family.apply(lambda r: row_reading(r).partition(": ")[0], axis=1)
    table = pd.crosstab(family["stage"], heads)
    return table[[w for w in READING_WORDS if w in table.columns]].rename_axis(
        index="stage", columns="plain reading")


def reading_summary(family: pd.DataFrame) -> str:
    """'3 holds here, 12 undecided, 2 not testable here': the decisions by reading."""
    counts = reading_counts(family).sum()
    return ", ".join(f"{int(n)} {word}" for word, n in counts.items() if n)


def changes(families: dict, before: str, after: str) -> pd.DataFrame:
    """The decisions whose verdict (at 5% or after Holm) or stage differs between two
    profiles' families
    (e.g. cpu and cpu-long), with both staged verdicts (a gated one carries its reason:
    a gate that opens because an interval widened is not a model that learned more);
    decisions one profile lacks are left out (``changes_text`` counts them)."""
    a, b = families[before], families[after]
    shared = [k for k in a.index if k in b.index]

    def numbers(family, k) -> str:  # the verdicts alone hide what moved
        row = family.loc[k]
        return f"{size(_shown(row)[1])}, at 5%: {row['verdict']}"
    columns = ["decision", f"{before}: estimate [95%], paper-positive", before,
               f"{after}: estimate [95%], paper-positive", after]
    rows = [dict(zip(columns, (_shown(a.loc[k])[0], numbers(a, k), a.loc[k, "verdict_staged"],
                               numbers(b, k), b.loc[k, "verdict_staged"])))
            for k in shared if (a.loc[k, "verdict"], a.loc[k, "verdict_holm"], a.loc[k, "stage"])
            != (b.loc[k, "verdict"], b.loc[k, "verdict_holm"], b.loc[k, "stage"])]
    return pd.DataFrame(rows, columns=columns).set_index("decision")


def changes_text(families: dict, before: str, after: str) -> str:
    """'4 of the 22 decisions at cpu are made at cpu-long so far; 1 of them changes
    verdict or stage (below).' The count a changes table needs to be read by."""
    a, b = families[before], families[after]
    shared = [k for k in a.index if k in b.index and a.loc[k, "stage"] != NO_MODEL]
    changed = len(changes(families, before, after))
    model = int((a["stage"] != NO_MODEL).sum())
    return (f"{len(shared)} of the {model} model decisions at {before} are made at {after}"
            f"{' so far' if still_training(resolve(after)) else ''}; "
            + (f"{changed} of them {'changes' if changed == 1 else 'change'} verdict (at "
               f"5% or after Holm's adjustment) or stage (below)." if changed else
               "none of them changes verdict (at 5% or after Holm's adjustment) or stage."))


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
    """Training FLOPs of one base run of the profile (the compute panels place a decision
    about no trained model there; the others at their arms', ``costed``)."""
    b = C.base(resolve(profile))
    return C.step_flops(b) * b.max_steps


# The paper's ALBERT-style model behind each claim and its steps, for the compute axis
# (paper.EXPERIMENT_SCALE names them; the wall-clock claim's is xxlarge at 125k steps,
# the BERT-large side's equal time).
PAPER_MODEL = {"asymmetry": ("albert-base", 125_000), "sop_nsp": ("albert-base", 125_000),
               "dropout": ("albert-xxlarge", 1_000_000),
               "wall_clock": ("albert-xxlarge", 125_000),
               "transitions": ("albert-large", 125_000),
               "embedding_sweep": ("albert-base", 125_000),
               "downstream": ("albert-base", 125_000)}
# Masked positions per 512-token sequence: the official code's default
# max_predictions_per_seq (whether the paper's runs used it is not stated).
PAPER_MASKED = 20


def paper_compute() -> dict:
    """{claim: training FLOPs of the paper's run} (model.params.useful_flops, batch 4096
    x 512, as ``training_compute`` counts ours)."""
    from ..model.config import preset
    from ..model.params import useful_flops
    from .. import paper
    return {claim: useful_flops(preset(name), paper.PAPER_BATCH, paper.PAPER_SEQ,
                                PAPER_MASKED) * steps
            for claim, (name, steps) in PAPER_MODEL.items()}


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


def stretch_summary(profile: ResolvedProfile) -> pd.DataFrame:
    """The stored runs of a profile still training in stretches, one row per evaluated
    run (its architecture, objective, dropout, seed, steps, cross-entropy at [MASK] and
    level on the first rung): what has landed before any of its decisions is complete."""
    from ..engine.store import stored_eval, stored_pretrain
    from ..studies.decisions import CE, levels
    from ..stats.inference import arm_level
    store, evaluation, rungs = profile.results, profile.evaluation, levels(profile)
    rows = []
    for config in _stretch_runs(profile):
        run = stored_pretrain(store, config)
        scored = run and stored_eval(store, run["hash"], evaluation)
        if not scored:
            continue
        m = config.model
        ce = scored["metrics"][CE]
        rows.append({"H": m.hidden_size, "E": m.embedding_size, "sharing": m.sharing,
                     "objective": config.objective, "dropout": m.hidden_dropout_prob,
                     "seed": config.seed, "steps": config.max_steps,
                     "CE at [MASK] (nats)": round(ce, 4),
                     "level %": round(100 * arm_level("", ce, rungs).level, 1),
                     "hash": run["hash"]})
    return pd.DataFrame(rows)
