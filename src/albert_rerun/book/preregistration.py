"""The generated parts of the pre-registration page (book/preregistration.md), filled from
``book/templates/prereg-*.md``; the registered text itself is never generated."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd

from ..studies import confirm as K
from ..studies import confirm_analysis as A
from ..studies.decisions import interval_text
from .template import fill, pipe, record_values, write_parts

PAGE = "book/preregistration.md"
INDEX = "data/preregistration-amendment-index.json"
# a dated amendment's numbers are frozen as committed (tests recompute them)
AMENDMENT_PARTS = "data/preregistration-amendments.json"
HEADING = re.compile(r"^### Amendment (\d+), (\d{4}-\d\d-\d\d \d\d:\d\d UTC): (.*)$", re.M)
STORED = re.compile(r"\*\*Runs stored when it was written\*\*: (all 99|none finished|(\d+) "
                    r"of the 99)")
FLAGS = ("rule", "margin", "seed", "verdict")
SUMMARISED_AMENDMENTS = 12  # the amendments book/templates/prereg-since.md summarises
REACH = 0.05  # amendment 2: a TOST power at a true 0 below this puts "equivalent" out of reach
LIKELY = 0.5  # amendment 4: "reachable at a true 0" from this power on


def _git(root: Path, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def headings(page_text: str) -> list:
    """[(number, date, title)] of the page's amendments, in order."""
    return [(int(n), date, title) for n, date, title in HEADING.findall(page_text)]


def sections(page_text: str) -> dict:
    """{number: the amendment's text, heading included}."""
    starts = [(m.start(), int(m.group(1))) for m in HEADING.finditer(page_text)]
    ends = [s for s, _ in starts[1:]] + [len(page_text)]
    return {n: page_text[s:e] for (s, n), e in zip(starts, ends)}


def stated_runs(section: str) -> int:
    """The runs an amendment says were stored when it was written."""
    m = STORED.search(section)
    if m is None:
        raise LookupError("the amendment does not say which runs were stored")
    return {"all 99": 99, "none finished": 0}.get(m.group(1), int(m.group(2) or 0))


def shallow(root: Path) -> bool:
    """Whether ``root`` is a shallow clone."""
    return _git(root, "rev-parse", "--is-shallow-repository").strip() == "true"


def first_commit(root: Path, text: str, path: str = PAGE) -> str:
    """The first commit that adds ``text`` to ``path``."""
    out = _git(root, "log", "--format=%H", "--reverse", f"-S{text}", "--", path).split()
    if not out:
        raise LookupError(f"no commit adds {text!r} to {path}")
    return out[0]


def design_hashes() -> set:
    """The 16-digit names of the 99 runs of the confirmatory design."""
    from ..engine.store import config_hash
    from ..paths import repo_root
    from ..studies import conditions as C
    record = A.equal_time_record(repo_root() / "data" / "results" / A.STORE)
    configs = A.conditions(record["steps"])
    return {config_hash(C.seeded(configs[name], seed).to_dict())
            for name in A.CONDITIONS for seed in A.CONFIRM_SEEDS}


def runs_at(root: Path, commit: str, hashes: set) -> int:
    """How many of ``hashes`` had a stored run in the tree of ``commit``."""
    names = _git(root, "ls-tree", "-r", "--name-only", commit,
                 "data/results/confirm/pretrain/").split()
    return sum(Path(n).stem in hashes for n in names if n.endswith(".json"))


def rows(root: Path) -> list:
    """The table's rows, the registration first (commits and runs None in a shallow clone)."""
    page = (root / PAGE).read_text()
    index = json.loads((root / INDEX).read_text())
    record = json.loads((root / A.RECORD).read_text())
    for number, _, title in headings(page):
        if str(number) not in index["amendments"]:
            raise LookupError(f"amendment {number} ({title}) is not described in {INDEX}")
    history = not shallow(root)
    hashes = design_hashes()
    out = [{"what": "Registration", "date": record["date"], "commit": record["commit"],
            "runs": runs_at(root, record["commit"], hashes) if history else None,
            **index["registration"]}]
    texts = sections(page)
    for number, date, title in headings(page):
        commit = first_commit(root, f"### Amendment {number},") if history else None
        out.append({"what": f"Amendment {number}", "title": title, "date": date,
                    "commit": commit, "runs": stated_runs(texts[number]),
                    "committed runs": runs_at(root, commit, hashes) if history else None,
                    **index["amendments"][str(number)]})
    return out


def table(root: Path) -> str:
    """The registration and each amendment in a markdown table, with ``FLAGS`` columns."""
    head = ["", "written (UTC)", "commit", "runs stored (of 99)", "what it changed",
            *(f"changed a {f}?" for f in FLAGS)]
    body = []
    for row in rows(root):
        registration = row["what"] == "Registration"
        label = "registered-text" if registration else "amendment-" + row["what"].split()[-1]
        yes = "set" if registration else "yes"
        body.append([f"{{ref}}`{row['what']} <{label}>`",
                     row["date"].removesuffix(" UTC"),
                     f"`{row['commit'][:7]}`" if row["commit"] else "not in this clone",
                     "not in this clone" if row["runs"] is None else row["runs"],
                     row["summary"], *(yes if row[f] else "no" for f in FLAGS)])
    return pipe(head, body) + "\n"


def percent(power: float) -> str:
    """'under 1%', '73%', 'over 99%'."""
    return "under 1%" if power < 0.01 else "over 99%" if power > 0.99 else f"{100 * power:.0f}%"


def _interval(i, unit: str) -> str:
    return "not stored" if i is None else interval_text(i.mean, i.low, i.high, unit)


def curve_sizes() -> dict:
    """{"curve", "final"}: the held-out sequences of a curve point and of the verdicts."""
    from ..profiles import eval_config
    return {"curve": f"{A.conditions(None)[A.ALBERT].curve_examples:,}",
            "final": f"{eval_config(A.PILOT_PROFILE).mlm_sequences:,}"}


def results_values(store=None) -> dict:
    """The keys of ``prereg-results.md``, from the confirmatory runs read once."""
    from ..stats.inference import mean_interval
    frame, rungs = A.confirmatory_frame(store=store), A.rungs()
    judged, pilot = A.both_families(frame, rungs), A.both_families(A.pilot_frame(), rungs)
    ratios = A.time_ratios(frame)
    column = ratios["wide / BERT-style seconds"].astype(float)
    machines = list(dict.fromkeys(ratios["machines"]))
    median = round(float(column.median()), 2)
    scores = A.lr_check_scores(store)
    gap = None if scores is None else K.lr_check_gap(scores, A.margin_values(rungs)["ce"])
    albert = frame[frame["condition"] == A.ALBERT]  # SOP-trained, and without dropout
    held_out_gap = (frame[A.CE] - frame.get("train_mlm_loss_at_mask", float("nan"))
                    ).groupby([frame["condition"], frame["seed"]]).first()
    narrowing = (held_out_gap.loc[A.ALBERT] - held_out_gap.loc[A.DROPOUT]).dropna()
    record = A.equal_time_record(store)
    runs = A.trained_runs(store)
    speed = A.training_costs(runs).set_index("condition")["tokens/s"]
    return {
        "total": len(frame), "seeds": frame["seed"].nunique(),
        "primary_tests": A.holm_tests(judged["primary"]),
        "secondary_tests": A.holm_tests(judged["secondary"]),
        "primary_table": K.results_table(judged["primary"], pilot["primary"], A.PRIMARY),
        "secondary_table": K.results_table(judged["secondary"], pilot["secondary"],
                                           A.SECONDARY),
        "ratios": ", ".join(f"{s} {r:.2f}" for s, r in zip(ratios["seed"], column))
                  + f"; median {column.median():.2f}"
                  + (f"; both arms on {machines[0]}" if len(machines) == 1
                     and " / " not in machines[0] else ""),
        "flagged": int(ratios["flagged"].sum()), "ratio_seeds": len(ratios),
        "shortfall": "as much time as" if median == 1 else
                     f"about {abs(1 - median):.0%} {'less' if median < 1 else 'more'} time than",
        "lr_check": "its runs are not stored" if scores is None else
                    "5e-3 is within the cross-entropy margin of the best rate" if gap is None
                    else f"5e-3 was not the best rate: {gap[0]:g} beat it by {gap[1]:.3f} nats",
        "sop_above": _interval(A.above_majority(albert, "sop_cuefree_accuracy_probe"),
                               "points"),
        "dropout_gap": _interval(mean_interval(held_out_gap.loc[A.ALBERT].dropna())
                                 if held_out_gap.loc[A.ALBERT].notna().all() else None, "nats"),
        "dropout_narrowing": _interval(mean_interval(narrowing) if len(narrowing) >= 2
                                       else None, "nats"),
        "cpu": record["provenance"]["machine"]["cpu"],
        "bert_ms": f"{1000 * record['bert_step_seconds']:.1f}",
        "wide_ms": f"{1000 * record['wide_step_seconds']:.1f}",
        "wide_steps": f"{record['steps']:,}", "bert_steps": f"{record['bert_steps']:,}",
        "hours": f"{runs['train_seconds'].sum() / 3600:.1f}",
        "machines": ", ".join(sorted(set(runs["machine"]))),
        "slowest_speed": f"{speed.min():,.0f}", "slowest": speed.idxmin(),
        "fastest_speed": f"{speed.max():,.0f}", "fastest": speed.idxmax(),
        **curve_sizes()}


def results_text(generated: Path, store=None) -> str:
    """The results once every run is stored (curves drawn into ``generated``); counts before."""
    if A.complete(store):
        values = results_values(store)
        write_parts(generated, {"preregistration-confirm-curves.png": K.curves_figure(
            A.confirmatory_frame(store=store), A.rungs())})
        return fill("prereg-results.md", values)
    counts = A.progress(store)
    shown = counts.assign(**{c: counts[c].astype(str) + " of " + counts["of"].astype(str)
                             for c in ("trained", "evaluated")})[["trained", "evaluated"]]
    return fill("prereg-progress.md", {
        "trained": int(counts["trained"].sum()), "evaluated": int(counts["evaluated"].sum()),
        "total": int(counts["of"].sum()), "table": shown.to_markdown(disable_numparse=True)})


def _number(value: float, unit: str) -> str:
    return f"{value:+.1f}" if unit == "points" else f"{value:+.4f}"


def pilot_values(frame: pd.DataFrame) -> dict:
    """The keys of ``prereg-pilot.md``: the pilot's differences and the power they give."""
    n = len(A.CONFIRM_SEEDS)
    plan, secondary = K.power_plan(frame), K.power_plan(frame, A.SECONDARY)
    rows, notes = [], []
    for spec in A.PRIMARY:
        row, chance = plan.loc[spec.key], K.chance_arms(spec, frame)
        at_chance = chance is not None and chance["both"]
        if at_chance:
            notes.append(fill("prereg-chance.md", {
                "key": spec.key, "majority": f"{chance['majority']:.1f}%",
                "arms": ", ".join(f"{k} {v:.1f}%" for k, v in chance["arms"].items()),
                "ses": K.CHANCE_SES, "se": f"{chance['se']:.1f}",
                "pairs": f"{chance['pairs']:,}", "setter": plan["seeds for 80%"].idxmax(),
                "most": f"{plan['seeds for 80%'].max():.0f}",
                "own": f"{row['seeds for 80%']:.0f}"}))
        rows.append({"decision": f"{spec.label} ({spec.unit})",
                     "pilot mean": _number(row["mean"], spec.unit),
                     "paired SD": f"{abs(row['paired SD']):.3g}",
                     f"power at {n} seeds": percent(row[f"power at {n}"]),
                     "seeds for 80%": f"{row['seeds for 80%']:.0f}",
                     "note": "meaningless: both arms at chance (below)" if at_chance else ""})
    second = [{"decision": f"{s.label} ({s.unit})",
               "pilot mean": _number(secondary.loc[s.key, "mean"], s.unit),
               "paired SD": f"{abs(secondary.loc[s.key, 'paired SD']):.3g}"}
              for s in A.SECONDARY]
    tables = {name: pd.DataFrame(table).to_markdown(index=False, disable_numparse=True)
              for name, table in (("primary_table", rows), ("secondary_table", second))}
    return {"alpha": f"{A.holm_alpha():.3f}", "tests": 2 * len(A.PRIMARY),
            "chance_note": "".join(notes), "seeds": K.seed_count(plan), **tables,
            **curve_sizes()}


def reading(row) -> str:
    """Amendment 4's reading: whether "equivalent" is within the design's reach."""
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


def readings(frame: pd.DataFrame, rungs: dict) -> dict:
    """{key: amendment 4's reading} of every registered decision."""
    out = {}
    for specs in (A.PRIMARY, A.SECONDARY):
        plan = K.equivalence_plan(frame, rungs, specs, len(A.CONFIRM_SEEDS))
        out.update({spec.key: reading(plan.loc[spec.key]) for spec in specs})
    return out


def since_values(frame: pd.DataFrame, rungs: dict) -> dict:
    """The keys of ``prereg-since.md``."""
    by_key = readings(frame, rungs)

    def names(*groups) -> str:
        keys = [k for k, r in by_key.items() if r in groups]
        return ", ".join(f"`{k}`" for k in keys) if keys else "none"
    doubtful = "reachable at a true 0, unlikely at the pilot's mean"
    reachable = names("reachable at a true 0", doubtful)
    nil = [s.key for s in A.SECONDARY + A.PRIMARY if s.paper_sign == 0]
    return {"out_of_reach": names("out of reach"), "unlikely": names("unlikely at the pilot's SD"),
            "reachable": reachable,
            "doubtful": "each of them" if names(doubtful) == reachable else names(doubtful),
            "nil": ", ".join(f"`{k}`" for k in nil),
            "nil_reading": ", ".join(by_key[k] for k in nil)}


class SummaryStale(RuntimeError):
    """The page has an amendment that the amendments' summary omits."""


def check_summary(page: Path) -> None:
    """Refuse to build a summary of fewer amendments than the page has."""
    count = len(headings(page.read_text()))
    if count != SUMMARISED_AMENDMENTS:
        raise SummaryStale(
            f"{page.name} has {count} amendments but book/templates/prereg-since.md "
            f"describes {SUMMARISED_AMENDMENTS}: update it and SUMMARISED_AMENDMENTS")


def frozen_amendment_parts(root: Path) -> dict:
    """{part: text} of the amendments' frozen tables."""
    path = root / AMENDMENT_PARTS
    if not path.is_file():
        raise FileNotFoundError(f"{AMENDMENT_PARTS} is missing: the amendments' tables "
                                f"are frozen there")
    return json.loads(path.read_text())


def write_preregistration_parts(root: Path) -> list:
    """book/_generated/preregistration-*.md (table and frozen parts from the repository)."""
    from ..paths import repo_root
    check_summary(root / PAGE)
    generated = root / "book" / "_generated"
    frame, rungs = A.pilot_frame(), A.rungs()
    parts = {"amendments.md": fill("prereg-amendments.md", {"table": table(repo_root())}),
             "record.md": fill("prereg-record.md", record_values(repo_root() / A.RECORD)),
             "progress.md": results_text(generated),
             "pilot.md": fill("prereg-pilot.md", pilot_values(frame)),
             "since.md": fill("prereg-since.md", since_values(frame, rungs)),
             **{f"{name}.md": text for name, text in frozen_amendment_parts(repo_root()).items()},
             "pilot-curves.png": K.curves_figure(frame, rungs)}
    return write_parts(generated, {f"preregistration-{name}": part
                                   for name, part in parts.items()})
