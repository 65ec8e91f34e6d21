"""The generated parts of the pre-registration page (book/preregistration.md): the
first screen's table of the registration and its amendments (``amendment_index``), its
registration record, the confirmatory runs' progress (counts only) and the pilot's table
that the design was sized on. The registered text itself is never generated."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from ..studies import confirm as K
from ..studies import confirm_analysis as A
from ..studies import confirm_design as D
from ..studies import confirm_report as R
from ..studies.decisions import unit_digits


def record_text(root: Path, record: str = D.RECORD, before: str = "") -> str:
    """A registration's record in a line: its commit, date and digest, or that it is
    not yet registered (``before`` added, such as what may not happen until then)."""
    path = root / record
    if not path.is_file():
        return ("**Not yet registered**: no registration record "
                f"(`{record}`) is stored{before}.\n")
    stored = json.loads(path.read_text())
    return (f"**Registered** at commit `{stored['commit'][:7]}` on {stored['date']}. "
            f"The registered text's SHA-256 is `{stored['sha256'][:16]}…`, and a test "
            f"checks it at every build.\n")


def amendments_text(root: Path) -> str:
    """The first screen's table (``amendment_index.table``): the registration and each
    amendment, when each was written and committed, the confirmatory runs stored then,
    what it changed, and whether it touched a rule, a margin, a seed or a verdict."""
    from .amendment_index import table
    return (table(root) + "\n" + "Runs: as each text states them. Commit: the first that "
            "holds the text. Each row links to it below.\n")


def progress_text(store=None) -> str:
    """The confirmatory runs stored so far, per condition: counts, no estimate."""
    table = A.progress(store)
    record = D.equal_time_record(store)
    total, done = int(table["of"].sum()), int(table["evaluated"].sum())
    trained = int(table["trained"].sum())
    lines = [f"**Progress**: {trained} of the {total} confirmatory runs are trained and "
             f"{done} evaluated (the {total} are the nine conditions at "
             f"{len(D.CONFIRM_SEEDS)} seeds; the random-initialization controls and the "
             f"learning-rate check of amendment 1 come beside them). No confirmatory "
             f"estimate is computed before all {total} are.",
             "", "| condition | trained | evaluated |", "|---|---|---|"]
    lines += [f"| {name} | {row.trained} of {row.of} | {row.evaluated} of {row.of} |"
              for name, row in table.iterrows()]
    if done == total:  # judged once: the verdicts lead, the counts follow
        lines = ["**The verdicts**, judged once, with every confirmatory run stored. "
                 + R.report(store), ""] + lines
    if record:
        lines += ["", R.equal_time_sentence(record)]
        runs = A.trained_runs(store)
        if len(runs):
            lines += ["", cost_text(runs)]
    else:
        lines += ["", "Equal time is not measured yet: the first stretch measures it "
                  "before its first run."]
    return "\n".join(lines) + "\n"


def cost_text(runs: pd.DataFrame) -> str:
    """What the stored runs' training took, and amendment 1's per-seed check of equal
    time (1.2), from their training records alone (no loss or evaluation is read)."""
    costs = A.training_costs(runs)
    speed = costs.set_index("condition")["tokens/s"]
    text = (f"Training of the {len(runs)} stored runs: {costs['hours'].sum():.1f} "
            f"thread-hours of training steps (evaluation and curve points excluded), "
            f"one thread a run, on {', '.join(sorted(set(runs['machine'])))}; from "
            f"{speed.min():,.0f} tokens a second ({speed.idxmin()}) to {speed.max():,.0f} "
            f"({speed.idxmax()}), counting the tokens that are not padding.")
    ratios = A.time_ratios(runs)
    if len(ratios):
        flagged = int(ratios["flagged"].sum())
        text += (f" Wide over BERT-style training seconds, per seed (amendment 1.2): "
                 f"{R.ratios_text(ratios)}. "
                 f"{flagged} of {len(ratios)} fall outside 0.9 to 1.1 and are flagged: on "
                 f"those seeds the two arms' training times differ by more than 10%. Above "
                 f"1 the wide model trained longer than the BERT-style model; below 1 it "
                 f"had less time, which favours \"contradicted\".")
    return text


def _number(value: float, unit: str) -> str:
    return f"{value:+.1f}" if unit == "points" else f"{value:+.4f}"


CHANCE_SES = 2  # an arm this many binomial standard errors or fewer from the majority
# label reads the pairs at chance (amendment 11)


def chance_arms(spec, frame: pd.DataFrame) -> dict | None:
    """Amendment 11's rule for an accuracy decision on pairs with a majority label: each
    arm's mean accuracy over seeds (in points, from the correct-or-not strings the
    decision reads), the majority label's, and one run's binomial standard error at the
    majority label's rate on the test pairs (every seed scores the same pairs). An arm
    reads the pairs at chance when its mean lies within ``CHANCE_SES`` standard errors of
    the majority label; "both" says whether both arms do. None for a decision that reads
    no such pairs (cross-entropy, or no majority label stored)."""
    import math
    if spec.kind != "accuracy" or not spec.metric.endswith("_probe_correct"):
        return None
    majority = spec.metric[:-len("_probe_correct")] + "_majority"
    if majority not in frame or spec.metric not in frame:
        return None
    arms, pairs, rate = {}, set(), set()
    for arm in (spec.a, spec.b):
        runs = frame[frame["condition"] == arm].dropna(subset=[spec.metric, majority])
        if not len(runs):
            return None
        arms[arm] = float(runs[spec.metric].map(
            lambda s: 100 * sum(c == "1" for c in s) / len(s)).mean())
        pairs |= set(runs[spec.metric].map(len))
        rate |= set(runs[majority].round(12))
    if len(pairs) != 1 or len(rate) != 1:
        raise ValueError(f"{spec.key}: the arms were scored on different test pairs")
    (n,), (p,) = pairs, rate
    se = 100 * math.sqrt(p * (1 - p) / n)
    return {"arms": arms, "majority": 100 * p, "pairs": n, "se": se,
            "both": all(abs(a - 100 * p) <= CHANCE_SES * se for a in arms.values())}


def chance_note(spec, chance: dict, plan: pd.DataFrame) -> str:
    """The sentences under the power table for a decision whose two arms read at chance
    (``plan``: ``confirm.power_plan``'s, to say whether the seed count rests on it)."""
    arms = ", ".join(f"{name} {value:.1f}%" for name, value in chance["arms"].items())
    own, most = plan.loc[spec.key, "seeds for 80%"], plan["seeds for 80%"].max()
    setter = plan["seeds for 80%"].idxmax()
    rests = (f"The seed count does not rest on it: this row needs {own:.0f} seeds for 80%, "
             f"`{setter}` needs {most:.0f}, and the rule takes the most." if own < most
             else f"The seed count rests on it: this row needs the most seeds, {own:.0f}.")
    return (f"The power of `{spec.key}` is meaningless (amendment 11). On its pairs both "
            f"pilot arms read at chance: {arms}, against {chance['majority']:.1f}% for the "
            f"majority label, each within {CHANCE_SES} standard errors of it "
            f"({CHANCE_SES} x {chance['se']:.1f} points, one run's binomial error on "
            f"{chance['pairs']:,} test pairs). A difference between two arms at chance is "
            f"noise, not an effect, and a power computed at its size says nothing about "
            f"the design. {rests}")


def pilot_text(frame: pd.DataFrame | None = None) -> str:
    """The pilot's per-seed paired differences and the power they give; a decision whose
    two arms read at chance (``chance_arms``) has a note beside its power instead of a
    reading (amendment 11)."""
    frame = A.pilot_frame() if frame is None else frame
    n = len(D.CONFIRM_SEEDS)
    plan = K.power_plan(frame)
    lines = [f"Primary decisions, at Holm's first-step alpha of "
             f"{D.holm_alpha():.3f} ({2 * len(D.PRIMARY)} tests):", "",
             f"| decision | pilot mean | paired SD | power at {n} seeds | seeds for 80% "
             f"| note |", "|---|---|---|---|---|---|"]
    notes = []
    for spec in D.PRIMARY:
        row = plan.loc[spec.key]
        unit = spec.unit
        chance = chance_arms(spec, frame)
        note = ""
        if chance is not None and chance["both"]:
            note = "meaningless: both arms at chance (below)"
            notes.append(chance_note(spec, chance, plan))
        lines.append(f"| {spec.label} ({unit}) | {_number(row['mean'], unit)} | "
                     f"{abs(row['paired SD']):.3g} | {_percent(row[f'power at {n}'])} | "
                     f"{row['seeds for 80%']:.0f} | {note} |")
    lines += [""] + [line for note in notes for line in (note, "")]
    lines += [f"The rule (section 4) gives {K.seed_count(plan)} seeds.", "",
              "Secondary decisions (exploratory), the pilot's paired differences:", "",
              "| decision | pilot mean | paired SD |", "|---|---|---|"]
    secondary = K.power_plan(frame, D.SECONDARY)
    for spec in D.SECONDARY:
        row = secondary.loc[spec.key]
        unit = spec.unit
        lines.append(f"| {spec.label} ({unit}) | {_number(row['mean'], unit)} | "
                     f"{abs(row['paired SD']):.3g} |")
    return "\n".join(lines) + "\n"


REACH = 0.05  # a TOST power at a true 0 below this: "equivalent" is out of reach


def equivalence_text(frame: pd.DataFrame | None = None, rungs: dict | None = None,
                     groups: dict | None = None) -> str:
    """Amendment 2's table: the TOST's power at a true difference of 0, per decision, and
    which decisions cannot end "equivalent" at the registered seed count. ``groups``:
    ``reach_groups``' result, if already computed."""
    groups = groups or reach_groups(frame, rungs)
    n = len(D.CONFIRM_SEEDS)
    lines, nil = [], []
    for title, (specs, plan) in zip(("Primary decisions", "Secondary decisions "
                                     "(exploratory)"), groups["plans"]):
        lines += [f"{title}, {n} seeds, at Holm's first-step alpha of "
                  f"{D.holm_alpha(specs):.4g} ({2 * len(specs)} tests) and at 5%:", "",
                  "| decision | margin | pilot paired SD | TOST power, Holm's first step "
                  "| at 5% |", "|---|---|---|---|---|"]
        out = []
        for spec in specs:
            row = plan.loc[spec.key]
            unit = spec.unit
            first = row["TOST power, Holm's first step"]
            lines.append(f"| {spec.label} | ±{row['margin']:.{unit_digits(unit)}f} {unit} "
                         f"| {row['paired SD']:.3g} | {_percent(first)} | "
                         f"{_percent(row['TOST power at 5%'])} |")
            if first < REACH:
                out.append(spec)
        nil += [s for s in out if s.paper_sign == 0]
        lines += ["", f"Under {100 * REACH:.0f}% at Holm's first step, even at a true "
                  f"difference of 0: {len(out)} of {len(specs)}"
                  + (" (" + ", ".join(f"`{s.key}`" for s in out) + ")" if out else "")
                  + ".", ""]
    lines.append("For those the design can show a difference but not its absence: "
                 "\"equivalent\" is out of its reach, and an \"inconclusive\" there is not "
                 "evidence of no effect.")
    for spec in nil:
        lines.append(f"The paper says `{spec.key}` ({spec.label}) is no difference: here "
                     f"that claim can be contradicted but not confirmed.")
    return "\n".join(lines) + "\n"


def reach_groups(frame: pd.DataFrame | None = None, rungs: dict | None = None) -> dict:
    """Amendment 3's reading: {"plans": the two families' ``equivalence_plan``s, "out":
    keys whose TOST stays under REACH even at the smallest SD of the pilot's 95% interval,
    "unlikely": under REACH at the pilot's SD only, "at_mean": reachable at a true 0 but
    under REACH at the pilot's own mean}."""
    frame = A.pilot_frame() if frame is None else frame
    rungs = A.rungs() if rungs is None else rungs
    groups = {"plans": [], "out": [], "unlikely": [], "at_mean": []}
    for specs in (D.PRIMARY, D.SECONDARY):
        plan = K.equivalence_plan(frame, rungs, specs, len(D.CONFIRM_SEEDS))
        groups["plans"].append((specs, plan))
        for spec in specs:
            row = plan.loc[spec.key]
            first = row["TOST power, Holm's first step"]
            if row["TOST power at the smallest SD"] < REACH:
                groups["out"].append(spec.key)
            elif first < REACH:
                groups["unlikely"].append(spec.key)
            if first >= REACH and row["TOST power at the pilot mean"] < REACH:
                groups["at_mean"].append(spec.key)
    return groups


def _names(keys) -> str:
    return ", ".join(f"`{k}`" for k in keys) if keys else "none"


def reach_text(frame: pd.DataFrame | None = None, rungs: dict | None = None,
               groups: dict | None = None) -> str:
    """Amendment 3's table: amendment 2's TOST power at a true 0 read with the pilot SD's
    uncertainty (at the low end of its 95% interval), at Holm's next-to-last step, and
    at the pilot's own mean; which decisions stay out of reach of "equivalent"."""
    from ..stats.power import sd_factors
    n, low = len(D.CONFIRM_SEEDS), sd_factors(len(D.PILOT_SEEDS))[0]
    groups = groups or reach_groups(frame, rungs)
    lines = [f"Power of the TOST at {n} seeds; \"first step\" is Holm's first-step alpha "
             f"of each family ({D.holm_alpha(D.PRIMARY):.4g} primary, "
             f"{D.holm_alpha(D.SECONDARY):.4g} secondary); the smallest SD is "
             f"{low:.2f} times the pilot's, the low end of its 95% interval from "
             f"{len(D.PILOT_SEEDS)} seeds:", "",
             "| decision | true 0, pilot SD, first step | true 0, smallest SD, first "
             "step | true 0, pilot SD, at 0.025 | pilot mean, pilot SD, first step |",
             "|---|---|---|---|---|"]
    for specs, plan in groups["plans"]:
        for spec in specs:
            row = plan.loc[spec.key]
            first = row["TOST power, Holm's first step"]
            lines.append(f"| `{spec.key}` | {_percent(first)}"
                         f" | {_percent(row['TOST power at the smallest SD'])} | "
                         f"{_percent(row['TOST power at ALPHA / 2'])} | "
                         f"{_percent(row['TOST power at the pilot mean'])} |")
    lines += ["", f"Under {100 * REACH:.0f}% even at the smallest SD, so out of reach of "
              f"\"equivalent\" unless the true SD is smaller still: "
              f"{_names(groups['out'])}.",
              "", f"Under {100 * REACH:.0f}% at the pilot's SD but not at the smallest, so "
              f"amendment 2's \"out of reach\" is withdrawn for them (\"equivalent\" is "
              f"unlikely, not impossible): {_names(groups['unlikely'])}.",
              "", f"Likely to reach \"equivalent\" at a true 0 but under "
              f"{100 * REACH:.0f}% at the pilot's own mean (the pilot's difference lies "
              f"outside or near the margin): {_names(groups['at_mean'])}."]
    return "\n".join(lines) + "\n"


LIKELY = 0.5  # amendment 4: "reachable at a true 0" from this power on


def reading(row) -> str:
    """Amendment 4's reading of one decision's ``equivalence_plan`` row: whether the
    verdict "equivalent" is within the design's reach."""
    first = row["TOST power, Holm's first step"]
    if row["TOST power at the smallest SD at ALPHA / 2"] < REACH:
        return "out of reach"
    if first < REACH:
        return "unlikely at the pilot's SD"
    if first < LIKELY:
        return "possible"
    if row["TOST power at the pilot mean"] < REACH:
        return "reachable at a true 0, unlikely at the pilot's mean"
    return "reachable at a true 0"


def lenient_text(frame: pd.DataFrame | None = None, rungs: dict | None = None,
                 groups: dict | None = None) -> str:
    """Amendment 4's table: each decision's TOST power at a true 0 at the pilot's SD and
    Holm's first step, and at the most lenient pair (the smallest SD, ALPHA / 2), with
    its reading (``reading``)."""
    lines = ["| decision | pilot SD, first step | smallest SD, 0.025 | reading |",
             "|---|---|---|---|"]
    for specs, plan in (groups or reach_groups(frame, rungs))["plans"]:
        for spec in specs:
            row = plan.loc[spec.key]
            first = row["TOST power, Holm's first step"]
            lines.append(f"| `{spec.key}` | {_percent(first)} | "
                         f"{_percent(row['TOST power at the smallest SD at ALPHA / 2'])} | "
                         f"{reading(row)} |")
    return "\n".join(lines) + "\n"


def readings(groups: dict) -> dict:
    """{reading: [keys]} by amendment 4's rule, in the families' order, of
    ``reach_groups``' plans."""
    out = {}
    for specs, plan in groups["plans"]:
        for spec in specs:
            out.setdefault(reading(plan.loc[spec.key]), []).append(spec.key)
    return out


SUMMARISED_AMENDMENTS = 12  # the amendments ``since_text``'s prose summarises


class SummaryStale(RuntimeError):
    """The page has an amendment that the amendments' summary (``since_text``) omits."""


def amendment_count(page: Path) -> int:
    """How many dated amendments the page has (its ``### Amendment N`` headings)."""
    return len(re.findall(r"^### Amendment \d+\b", page.read_text(), flags=re.M))


def check_summary(page: Path) -> None:
    """Refuse to build a summary of fewer amendments than the page has."""
    count = amendment_count(page)
    if count != SUMMARISED_AMENDMENTS:
        raise SummaryStale(
            f"{page.name} has {count} amendments but the amendments' summary (since_text) "
            f"describes {SUMMARISED_AMENDMENTS}: update since_text and "
            f"SUMMARISED_AMENDMENTS with the new amendment")


def since_text(frame: pd.DataFrame | None = None, rungs: dict | None = None,
               groups: dict | None = None) -> str:
    """The note at the head of the amendments on what they mean for reading the
    verdicts (the reader's summary; the amendments themselves are the record)."""
    groups = readings(groups or reach_groups(frame, rungs))
    unlikely = groups.get("unlikely at the pilot's SD", [])
    reachable = (groups.get("reachable at a true 0", [])
                 + groups.get("reachable at a true 0, unlikely at the pilot's mean", []))
    text = ("**Since the registration**, twelve dated amendments at the end of the page "
            "change no decision, margin, test, seed or verdict rule. Amendment 1 fixes "
            "how the equal-time and SOP decisions are read. Amendments 2 to 4 add the "
            "{term}`power` of the TOST, the chance of an \"equivalent\" verdict; "
            "amendment 4's reading replaces the two before it. Amendments 5 and 6 correct "
            "what amendments 2 to 4 say of blinding (the training logs printed single "
            "runs' cross-entropies until 2026-12-03 13:55 UTC, some before amendments 2 "
            "to 4) and word the equal-time verdict with its measured time ratio. "
            "Amendments 7 to 10, written after the verdicts, change only how they are shown "
            "(amendment 8 withdraws a post-hoc check that amendment 7 had added). "
            "Amendment 11 (corrected by 12) withdraws four registered passages that went "
            "beyond the data: \"equivalent\" read as \"absent\", two reasons that runs "
            "stored at the registration contradicted, and the SOP decision's power. "
            f"Out of its reach, even at the most lenient values: "
            f"{_names(groups.get('out of reach', []))}: these can show a difference "
            f"but not its absence. Unlikely at the pilot's spread over seeds: "
            f"{_names(unlikely)}. Reachable if the "
            f"true difference is 0: {_names(reachable)}")
    doubtful = groups.get("reachable at a true 0, unlikely at the pilot's mean", [])
    if reachable and doubtful == reachable:
        text += ", though for each the pilot's own difference makes a true 0 unlikely"
    text += "."
    nil = [s.key for s in D.SECONDARY + D.PRIMARY if s.paper_sign == 0]
    for key in nil:
        group = next(g for g, keys in groups.items() if key in keys)
        if group != "out of reach" and not group.startswith("reachable"):
            text += (f" The paper's claim of no difference (`{key}`) can be "
                     f"contradicted here, and is unlikely to be confirmed even if true.")
        elif group == "out of reach":
            text += (f" The paper's claim of no difference (`{key}`) can be "
                     f"contradicted here but not confirmed.")
    return text + "\n"


def _percent(power: float) -> str:
    if power < 0.01:
        return "under 1%"
    return "over 99%" if power > 0.99 else f"{100 * power:.0f}%"


CONFIRM_CURVES_FIGURE = """```{{figure}} _generated/preregistration-confirm-curves.png
:alt: the confirmatory paired differences along training for the four cross-entropy decisions

The confirmatory paired differences along training (all fresh seeds), A minus B in nats
for the four primary decisions on cross-entropy, with their 95% intervals (blue) and the
margin (grey). Every point, the last included, is read on the curve's {curve:,} held-out
sequences, not the {final:,} of the final evaluation that the verdicts read, so the last
point is close to the table's difference but not equal to it. Points before the end come
before the learning rate has decayed. Each point is a share of the run's schedule, so the
equal-time panel compares equal shares of each arm's time.
```
"""


def confirm_curves(generated: Path, store=None) -> str:
    """Once every confirmatory run is stored: draw the primary decisions' paired
    differences along training into ``generated`` and return the figure's markdown;
    before, draw nothing and return "" (no interim estimate, not even a curve)."""
    if not A.complete(store):
        return ""
    write_figure(R.curves_figure(A.confirmatory_frame(store=store), A.rungs()),
                  generated / "preregistration-confirm-curves.png")
    return "\n" + CONFIRM_CURVES_FIGURE.format(**curve_sizes())


def curve_sizes() -> dict:
    """{"curve", "final"}: the held-out sequences a learning-curve point scores and those
    of the final evaluation the verdicts read, from the registered configs."""
    from ..profiles import eval_config
    return {"curve": D.conditions(None)[D.ALBERT].curve_examples,
            "final": eval_config(D.PILOT_PROFILE).mlm_sequences}


def write_figure(figure, path: Path) -> None:
    """Save a figure as PNG (``figure_text.png`` records its text's size for the book's
    check) and close it."""
    import matplotlib.pyplot as plt

    from .figure_text import png
    path.write_bytes(png(figure))
    plt.close(figure)


CURVES_FIGURE = """```{{figure}} _generated/preregistration-pilot-curves.png
:alt: the pilot's paired differences along training for the four cross-entropy decisions

The pilot's paired differences along training (seeds 0-2, exploratory), A minus B in nats
for the four primary decisions on cross-entropy, with their 95% intervals (blue) and the
margin (grey). Each point is a share of the run's schedule, so the equal-time panel
compares equal shares of each arm's time. Points before the end come before the
learning rate has decayed, and are read on the curve's {curve:,} held-out sequences, not the
{final:,} of the final evaluation. The SOP decision has no curve: its probe reads the final
model only.
```
"""


# The numbers a dated amendment shows are frozen with it: the text of its generated part
# as it was committed (tests/test_confirm.py recomputes each from the pilot's store and
# checks that it has not changed), so that a later change of code or data cannot
# rewrite an amendment.
AMENDMENT_PARTS = "data/preregistration-amendments.json"


def computed_amendment_parts(frame: pd.DataFrame | None = None,
                             groups: dict | None = None) -> dict:
    """{part: text} of the amendments' generated parts, computed now (from ``groups``,
    ``reach_groups``' result, if given)."""
    groups = groups or reach_groups(frame)
    return {"equivalence": equivalence_text(groups=groups),
            "reach": reach_text(groups=groups), "lenient": lenient_text(groups=groups)}


class AmendmentChanged(RuntimeError):
    """An amendment's frozen table is missing, or the code no longer computes it."""


def frozen_amendment_parts(root: Path, computed: dict | None = None) -> dict:
    """The amendments' frozen parts; with ``computed``, checked against it (the build
    refuses to show an amendment whose numbers the code would now give differently)."""
    path = root / AMENDMENT_PARTS
    if not path.is_file():
        raise AmendmentChanged(f"{AMENDMENT_PARTS} is missing: the amendments' tables "
                               f"are frozen there")
    frozen = json.loads(path.read_text())
    if computed is not None:
        changed = sorted(k for k in set(frozen) | set(computed)
                         if frozen.get(k) != computed.get(k))
        if changed:
            raise AmendmentChanged(
                f"the amendments' parts {changed} in {AMENDMENT_PARTS} differ from what "
                f"the code computes from the pilot's runs: a dated amendment's numbers "
                f"never change (a new finding is a new amendment)")
    return frozen


def write_preregistration_parts(root: Path) -> list:
    """book/_generated/preregistration-{amendments,record,progress,pilot,since,
    equivalence,reach,lenient}.md; the amendments' parts from their frozen text, checked.
    The first screen's table and the frozen parts come from the repository (``root`` may
    be a copy of the book's sources only, without its history)."""
    check_summary(root / "book" / "preregistration.md")
    generated = root / "book" / "_generated"
    generated.mkdir(parents=True, exist_ok=True)
    frame, rungs = A.pilot_frame(), A.rungs()
    groups = reach_groups(frame, rungs)  # the pilot's TOST powers, once for every part
    write_figure(R.curves_figure(frame, rungs), generated / "preregistration-pilot-curves.png")
    from ..paths import repo_root
    parts = {"amendments": amendments_text(repo_root()),
             "record": record_text(root),
             "progress": progress_text() + confirm_curves(generated),
             "pilot": pilot_text(frame) + "\n" + CURVES_FIGURE.format(**curve_sizes()),
             "since": since_text(groups=groups)}
    # the frozen tables, like the pilot's runs they come from, are the repository's
    parts.update(frozen_amendment_parts(repo_root(), computed_amendment_parts(groups=groups)))
    paths = []
    for name, text in parts.items():
        path = generated / f"preregistration-{name}.md"
        path.write_text(text)
        paths.append(path)
    return paths
