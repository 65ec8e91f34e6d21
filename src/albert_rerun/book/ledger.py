"""The claims ledger (chapter 9): every chapter's decisions as one Holm family per profile
(``book_family``, ``published_families``) and the ledger page's table, figures and values."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..studies import conditions as C
from ..studies.decisions import MissingRuns, store_fingerprint
from ..stats.inference import holm
from .asymmetry import asymmetry
from .downstream import downstream_gate
from .dropout import dropout
from .embedding_size import embedding_sweep
from .sop_nsp import sop_nsp
from .plain import READING_WORDS, difference, paper_positive, row_reading
from .transitions import transitions
from .wall_clock import wall_clock

CHAPTERS = {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
            "wall_clock": wall_clock, "transitions": transitions,
            "embedding_sweep": embedding_sweep, "downstream": downstream_gate}
# masked positions per 512-token sequence: the official code's max_predictions_per_seq
PAPER_MASKED = 20


def book_decisions(profile: ResolvedProfile | str, seeds=None, device="auto",
                   train_missing=False) -> list:
    """Every decision of the book at ``profile``, cached per state of the results root's
    files (``decisions.store_fingerprint``; 12 s each)."""
    from ..engine.store import results_dir
    root = results_dir("cpu").parent
    seeds = None if seeds is None else tuple(seeds)
    return list(_cached(resolve(profile), seeds, str(device), bool(train_missing),
                        (str(root), store_fingerprint(root))))


@lru_cache(maxsize=32)
def _cached(profile, seeds, device, train_missing, state) -> tuple:
    return tuple(_book_decisions(profile, seeds and list(seeds), device, train_missing))


def _book_decisions(profile: ResolvedProfile, seeds, device, train_missing) -> list:
    claims = set(C.profile_claims(profile)) | {"downstream"}
    out = [d for claim, make in CHAPTERS.items()
           if claim in claims or (claim == "asymmetry" and "grouped" in claims)
           for d in make(profile, seeds, device, train_missing, present=False).decisions]
    if profile.name in C.STRETCH_PROFILES:  # its checks of the test sets compare no
        out = [d for d in out if d.arms]  # model: they are the cpu book's
    return out


def book_family(profile: ResolvedProfile | str, seeds=None, device="auto",
                train_missing=False) -> pd.DataFrame:
    """``book_decisions`` as one Holm family, raw and adjusted verdicts."""
    return holm(book_decisions(resolve(profile), seeds, device, train_missing))


def published_profiles(current: ResolvedProfile) -> list:
    """The profiles whose stored results cover the book, ``current`` first (smoke alone)."""
    out = [current]
    for profile in map(resolve, () if current.name == "smoke" else ("cpu", "cpu-long", "gpu")):
        evaluated = profile.results / "eval"
        if (profile.name == current.name or not evaluated.is_dir()
                or not any(evaluated.iterdir())):
            continue
        try:
            if book_decisions(profile):
                out.append(profile)
        except MissingRuns:  # anything else is a bug, and stops the build
            pass
    return out


def published_families(current: ResolvedProfile | str, seeds=None, device="auto",
                       train_missing=False) -> dict:
    """{name: book_family} of ``published_profiles(current)``."""
    current = resolve(current)  # a notebook passes the name
    return {p.name: book_family(p, seeds if p is current else None, device,
                                train_missing and p is current)
            for p in published_profiles(current)}


def stacked(families: dict) -> pd.DataFrame:
    """``families`` in one frame with a ``profile`` column."""
    return pd.concat([family.assign(profile=p) for p, family in families.items()])


def training_compute(profile: ResolvedProfile | str) -> float:
    """Training FLOPs of one base run of the profile."""
    b = C.base(resolve(profile))
    return C.step_flops(b) * b.max_steps


def with_confirmatory(families: dict) -> dict:
    """``families`` with the confirmatory results last, keyed as the profiles' decisions."""
    from .confirmatory import CONFIRMATORY, confirmatory_family
    from .figures import PROFILE_KEYS
    from .headlines import EXTRA, HEADLINES
    family = confirmatory_family()
    if not len(family):
        return dict(families)
    claims = {**{h.key: c for c, h in HEADLINES.items()},
              **{PROFILE_KEYS.get(k, k): owner for k, (owner, _) in EXTRA.items()}}
    family = family.rename(index=PROFILE_KEYS)
    return {**families, CONFIRMATORY: family.assign(claim=family.index.map(claims))}


def shown(families: dict) -> pd.DataFrame:
    """``stacked(families)`` paper-positive, labels 'A vs B' from each key's first row."""
    frame = stacked(families)
    if frame.empty:
        return frame
    out = pd.DataFrame([paper_positive(r) for _, r in frame.iterrows()], index=frame.index)
    first = out[~out.index.duplicated()]
    out["claim"] = out.index.map(first["claim"])
    out["label"] = out.index.map(first["label"].str.replace(" minus ", " vs "))
    return out


def ledger_table(families: dict) -> pd.DataFrame:
    """A row per decision, a column per source: paper-positive interval and one label
    (``headlines.one_label`` without the reason)."""
    from .figures import CLAIM_TITLES
    from .headlines import answer, one_label
    frame = shown(families)
    frame["cell"] = [difference(r["estimate"], r["low"], r["high"], r["unit"], False,
                                margin=r["margin"]) + f"; {one_label({**answer(r), 'why': ''})}"
                     for _, r in frame.iterrows()]
    table = frame.reset_index(names="key").pivot(index="key", columns="profile",
                                                 values="cell")
    first = frame[~frame.index.duplicated()]
    table = table.reindex(index=first.index, columns=list(families)).fillna("-")
    table.index = pd.MultiIndex.from_arrays(
        [first["claim"].map(CLAIM_TITLES), first["label"],
         [f"±{m:.2g} {u}" for m, u in zip(first["margin"], first["unit"])]],
        names=["claim", "decision", "margin"])
    return table.rename_axis(columns=None)


def reading_counts(family: pd.DataFrame) -> pd.Series:
    """A profile's decisions counted by plain reading, in ``READING_WORDS``' order."""
    heads = family.apply(lambda r: row_reading(r).partition(": ")[0], axis=1).value_counts()
    return heads.reindex([w for w in READING_WORDS if w in heads.index])


def reading_summary(family: pd.DataFrame) -> str:
    """'3 holds here, 12 undecided, 2 not testable here'."""
    return ", ".join(f"{int(n)} {word}" for word, n in reading_counts(family).items())


def paper_figure(text) -> str:
    """The paper's figure in the book's sign ('-1.5 Avg' reads '+1.5 Avg')."""
    text = str(text)
    return "+" + text[1:] if text[:1] in ("-", "\u2212") and text[1:2].isdigit() else text


def ledger_csv(families: dict) -> str:
    """Every column behind the ledger's table, a row per decision and profile."""
    from ..stats import power
    raw = stacked(families)
    turned = shown(families)
    out = raw.assign(
        decision=turned["label"].to_numpy(),
        **{f"{k} (paper-positive)": turned[k].to_numpy() for k in ("estimate", "low", "high")},
        plain_reading=[row_reading(r) for _, r in raw.iterrows()],
        paper_positive_figure=[paper_figure(p) for p in raw["paper"]],
        arms=[" / ".join(a) for a in raw["arms"]])
    detect = pd.concat([power.power_table(f[f["in_family"]], alpha="holm").assign(profile=p)
                        for p, f in families.items()])
    detect = detect.drop(columns=["comparison", "unit", "margin"]).add_prefix("power: ")
    out = out.reset_index(names="key").merge(
        detect.reset_index(names="key"), how="left",
        left_on=["key", "profile"], right_on=["key", "power: profile"])
    return out.drop(columns="power: profile").to_csv(index=False, float_format="%.4g")


def csv_link(families: dict, name: str):
    """A data-URL link that downloads ``ledger_csv(families)`` as ``name``."""
    import base64
    from IPython.display import HTML
    data = base64.b64encode(ledger_csv(families).encode()).decode()
    return HTML(f'<a download="{name}" href="data:text/csv;base64,{data}">{name}</a>')


def ledger_figures(families: dict, max_rows: int = 12) -> list:
    """The ledger's forest plots, chapters in order, at most ``max_rows`` rows each."""
    from .figures import CLAIM_TITLES, forest
    frame = shown(families)
    frame = frame.assign(source=frame["profile"], row=frame["label"])
    parts, rows = [[]], 0
    for claim in dict.fromkeys(frame["claim"]):
        n = frame.loc[frame["claim"] == claim, "row"].nunique()
        if parts[-1] and rows + n > max_rows:
            parts, rows = parts + [[]], 0
        parts[-1].append(claim)
        rows += n
    return [forest(frame[frame["claim"].isin(claims)],
                   title=" · ".join(CLAIM_TITLES.get(c, c) for c in claims))
            for claims in parts if claims]


def seeds_table(family: pd.DataFrame) -> pd.DataFrame:
    """What the profile's seeds can detect, one row per decision in nats."""
    from ..stats import power
    table = power.power_table(family[family["in_family"]], alpha="holm")
    table = table[table["unit"] == "nats"]
    if len(table):  # named as the ledger's table names it
        table.index = shown({"": family.loc[table.index]})["label"]
    columns = {"seeds": "seeds", "in margins": "detectable (margins)",
               "seeds to detect the margin": "seeds for one margin",
               "TOST power at a true 0": "TOST power at 0"}
    return table[list(columns)].rename(columns=columns).rename_axis("decision").round(2)


def ledger_glue(families: dict, profile: str, n_seeds: int) -> dict:
    """The values the ledger's page glues (the methods page reads some)."""
    from ..profiles import PROFILES
    from ..stats import power
    from .downstream import finetune_repeat_text, finetune_repeats
    from .text import finetune_grid_text
    family, profiles = families[profile], list(families)
    judged = family[family["in_family"]]
    judged = judged.assign(label=[paper_positive(r)["label"] for _, r in judged.iterrows()])
    judged = power.power_table(judged, alpha="holm")  # its labels in the page's one sign
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
    """Hours of pretraining the profile's stored runs recorded, to a tenth."""
    from ..engine.store import read_json
    runs = [read_json(p) for p in (profile.results / "pretrain").glob("*.json")]
    return f"{sum(r['metrics']['train_seconds'] for r in runs if r) / 3600:.1f}"
