"""The confirmatory replication's registered design (book/preregistration.md): what the
confirmatory runs are and how they are judged, fixed before any of them existed; and the
checks that the registration and its runs keep their promise.

- ``conditions``: nine conditions at the cpu-long sizes (21,600 steps), the wide model's
  steps set by ``confirm.measure_equal_time`` on the machine that trains, before its
  first run (``equal_time_record``); ``planned``: every run, seed-major, with the
  learning-rate check (``lr_check``, amendment 1);
- ``CONFIRM_SEEDS``: fresh seeds no stored run uses, as many as ``confirm.power_plan``
  asks of the pilot's paired differences at Holm's first-step alpha (capped by the
  budget);
- ``PRIMARY``: the primary family, one Holm family of its own; ``SECONDARY``: the
  exploratory decisions, a second family; ``margin_values``: their margins;
- ``registered_text`` and ``registered_digest``: the page's registered block, which the
  tests keep unchanged; ``run_provenance_problems``: the runs whose commit does not
  descend from the registration or changed the training code (``FROZEN``).

The analysis of the stored runs is ``confirm_analysis``, its words ``confirm_report``,
the training and the command line ``confirm``.
"""
from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass

from ..engine.store import read_json, results_dir
from ..profiles import resolve
from . import conditions as C

STORE = "confirm"  # data/results/confirm/
PILOT_PROFILE = "cpu-long"  # the sizes, and the pilot's store
PILOT_SEEDS = (0, 1, 2)
FIRST_SEED = 1000  # no stored run uses a seed at or above 1000 (a test checks it)
# The seed count: the fewest at or above MIN_SEEDS that give every primary decision
# POWER at the pilot's mean and paired SD, at Holm's first-step alpha; at most MAX_SEEDS
# (the budget: about 2.9 CPU-hours a seed for the nine conditions, 12 seeds about 35 h).
# The pilot's table (book/preregistration.md) gives 11.
ALPHA, POWER, MIN_SEEDS, MAX_SEEDS = 0.05, 0.8, 10, 12
CONFIRM_SEEDS = tuple(range(FIRST_SEED, FIRST_SEED + 11))
# The wide model's peak learning rate: every arm's (5e-3), also the cpu sweep's pick; the
# sweep's three candidates all sat on the plateau, so a sweep would buy no information.
WIDE_LEARNING_RATE = 5e-3
EQUAL_TIME = "equal-time"
# Amendment 1: the wide model at its confirmatory steps at three rates, one seed no
# comparison uses, trained after the first confirmatory seed (exploratory; never changes
# the verdict: ``confirm_report.lr_check_reading``).
LR_CHECK_SEED, LR_CHECK_RATES = 100, (2.5e-3, 5e-3, 1e-2)
# Amendment 1: the code a confirmatory run trains with must equal the registration's.
FROZEN = ("src/albert_rerun/engine", "src/albert_rerun/model", "src/albert_rerun/data")

ALBERT = "ALBERT-style (all shared, E 32)"
NONE32 = "not shared, E 32"
ATTENTION = "attention-shared, E 32"
FFN = "FFN-shared, E 32"
BERT = "BERT-style (not shared, E = H = 64)"
ALL64 = "all shared, E 64"
NSP = "NSP-trained"
DROPOUT = "dropout 0.1"
WIDE = "wide all-shared (H 128), equal time"
CONDITIONS = (ALBERT, NONE32, ATTENTION, FFN, BERT, ALL64, NSP, DROPOUT, WIDE)
# the arms whose random-initialization controls the transition decisions subtract, and
# those scored on the cue-free pairs (the SOP and NSP decisions' arms)
TRANSITION_ARMS = (ALBERT, NONE32)
CUE_FREE_ARMS = (ALBERT, NSP)
CE = "mlm_loss_at_mask"


class NotComplete(LookupError):
    """The confirmatory store does not yet hold every run the design names."""


def print_unless_incomplete(compute) -> int:
    """A command's exit: print what ``compute()`` returns (0), or, where the stopping
    rule refuses it, the refusal's one line on stderr (1): it is not a failure."""
    import sys
    from ..cli import one_line
    try:
        print(compute())
    except NotComplete as error:
        print(one_line(error), file=sys.stderr)
        return 1
    return 0


# -- the conditions --------------------------------------------------------------------------

def conditions(wide_steps: int | None) -> dict:
    """{name: config without seed} at the cpu-long sizes; the wide model only with its
    ``wide_steps`` (the equal-time measurement's). The pilot's stored runs are these
    configs at seeds 0-2 (``pilot_conditions``)."""
    p = resolve(PILOT_PROFILE)
    b = C.base(p)
    H = b.model.hidden_size
    out = {ALBERT: b, NONE32: b.replace_model(sharing="none"),
           ATTENTION: b.replace_model(sharing="attention"),
           FFN: b.replace_model(sharing="ffn"), BERT: C.bert_style(p),
           ALL64: b.replace_model(embedding_size=H, sharing="all"),
           NSP: b.replace(objective="nsp"), DROPOUT: C.dropout(p)["dropout 0.1"]}
    if wide_steps is not None:
        out[WIDE] = C.wide_albert(p, wide_steps, WIDE_LEARNING_RATE)
    return out


def pilot_conditions() -> dict:
    """The pilot's configs: cpu-long's, its wide model at its stored equal-time steps."""
    stored = read_json(C._timing_store(resolve(PILOT_PROFILE)) / "choices"
                       / "equal-time.json")
    return conditions(stored["steps"] if stored else None)


def equal_time_record(store=None) -> dict | None:
    return read_json((store or results_dir(STORE)) / "choices" / f"{EQUAL_TIME}.json")


def lr_check(wide_steps: int) -> dict:
    """{rate: config}: the wide model at its confirmatory steps at each rate of the
    learning-rate check (amendment 1), at LR_CHECK_SEED."""
    pilot = resolve(PILOT_PROFILE)
    return {rate: C.wide_albert(pilot, wide_steps, rate).replace(seed=LR_CHECK_SEED)
            for rate in LR_CHECK_RATES}


def planned(wide_steps: int, seeds=CONFIRM_SEEDS) -> list:
    """Every confirmatory pretraining run, seed-major: all conditions of a seed, then its
    two transition controls, then the next seed; the learning-rate check (amendment 1)
    after the first seed."""
    from ..engine.config import untrained
    configs = conditions(wide_steps)
    out = []
    for k, seed in enumerate(seeds):
        out += [C.seeded(configs[name], seed) for name in CONDITIONS]
        out += [untrained(C.seeded(configs[name], seed)) for name in TRANSITION_ARMS]
        if k == 0:
            out += list(lr_check(wide_steps).values())
    return out


# -- the registered decisions ----------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """One registered decision: metric(a) minus metric(b), paired by seed."""

    key: str
    claim: str
    label: str
    a: str
    b: str
    paper_sign: int  # +1 / -1 the paper's sign of a - b; 0: the paper says no difference
    margin: str  # a key of ``margin_values``
    kind: str  # "ce" (paired t), "accuracy" (bootstrap or t, the wider), "change" (paired
    # t of the trained model's metric minus its random-init control's)
    metric: str = CE
    paper: str = ""

    @property
    def unit(self) -> str:
        """The unit of the paired difference: points of probe accuracy, share of the
        oscillation curve's range, or nats of cross-entropy."""
        return {"accuracy": "points", "change": "share of range"}.get(self.kind, "nats")


PRIMARY = (
    Spec("confirm/asymmetry", "asymmetry", "FFN-shared minus attention-shared, E 32",
         FFN, ATTENTION, +1, "small", "ce",
         paper="Table 4, E = 128: attention-shared 81.7, FFN-shared 80.2 Avg"),
    Spec("confirm/sharing-cost", "asymmetry", "all shared minus not shared, E = H = 64",
         ALL64, BERT, +1, "ce", "ce",
         paper="Table 4, E = 768: all shared 79.8, not shared 82.3 Avg"),
    Spec("confirm/sop", "sop_nsp",
         "SOP probe on cue-free pairs, SOP-trained minus NSP-trained", ALBERT, NSP, +1,
         "pairs", "accuracy", metric="sop_cuefree_probe_correct",
         paper="Table 5: SOP accuracy 86.5 (SOP-trained) vs 52.0 (NSP-trained)"),
    Spec("confirm/dropout", "dropout", "dropout 0.1 minus no dropout", DROPOUT, ALBERT,
         +1, "ce", "ce", paper="Table 8: 90.4 with dropout, 90.7 without (Avg)"),
    Spec("confirm/equal-time", "wall_clock",
         "wide all-shared (H 128) minus BERT-style, equal time", WIDE, BERT, -1, "ce", "ce",
         paper="Table 6: ALBERT-xxlarge 88.7 vs BERT-large 87.2 Avg, 32 h vs 34 h"),
)

SECONDARY = (
    Spec("explore/sharing-cost-E32", "asymmetry", "all shared minus not shared, E 32",
         ALBERT, NONE32, +1, "small", "ce",
         paper="Table 4, E = 128: all shared 80.1, not shared 81.6 Avg"),
    Spec("explore/attention-free", "asymmetry", "attention-shared minus not shared, E 32",
         ATTENTION, NONE32, 0, "small", "ce",
         paper="Table 4, E = 128: attention-shared 81.7, not shared 81.6 Avg"),
    Spec("explore/ffn-cost", "asymmetry", "FFN-shared minus not shared, E 32", FFN, NONE32,
         +1, "small", "ce", paper="Table 4, E = 128: FFN-shared 80.2, not shared 81.6 Avg"),
    Spec("explore/sop-cut-pairs", "sop_nsp",
         "SOP probe on the original pairs (with the cut cue), SOP- minus NSP-trained",
         ALBERT, NSP, +1, "pairs", "accuracy", metric="sop_probe_correct",
         paper="Table 5: 86.5 vs 52.0"),
    Spec("explore/nsp-cue-free", "sop_nsp",
         "NSP probe on cue-free pairs, NSP-trained minus SOP-trained", NSP, ALBERT, +1,
         "pairs", "accuracy", metric="nsp_cuefree_probe_correct",
         paper="Table 5: NSP accuracy 90.5 (NSP-trained) vs 78.9 (SOP-trained)"),
    Spec("explore/transitions-angle", "transitions",
         "angle oscillation, trained minus init: not shared minus all shared, E 32",
         NONE32, ALBERT, +1, "oscillation", "change", metric="oscillation_angle",
         paper="Figure 1: ALBERT's transitions smoother (no numbers)"),
    Spec("explore/transitions-l2", "transitions",
         "L2 oscillation, trained minus init: not shared minus all shared, E 32",
         NONE32, ALBERT, +1, "oscillation", "change", metric="oscillation_l2",
         paper="Figure 1: ALBERT's transitions smoother (no numbers)"),
    Spec("explore/embedding-size", "embedding_sweep",
         "not shared: E = H = 64 minus E 32 (E 64 has 8000 x 32 more embedding weights)",
         BERT, NONE32, -1, "ce", "ce",
         paper="Table 3, not shared: E = 768 82.3 vs E = 128 81.7 Avg"),
)

def margin_values(rungs: dict) -> dict:
    """The registered margins (nats, nats, points, share of range), given the held-out
    set's rungs (``decisions.levels``)."""
    return {"ce": 0.05 * rungs["distance"], "small": 0.02 * rungs["distance"],
            "pairs": 2.0, "oscillation": 0.25}


def holm_alpha(specs=PRIMARY, alpha: float = ALPHA) -> float:
    """Holm's first-step alpha: alpha over the family's tests, two per decision (the
    difference test and the TOST), as ``stats.holm`` counts them."""
    return alpha / (2 * len(specs))


# -- the registration -------------------------------------------------------------------------

PAGE = "book/preregistration.md"
RECORD = "data/preregistration.json"
BEGIN, END = "<!-- registered text begins -->", "<!-- registered text ends -->"


def registered_text(page_text: str) -> str:
    """The registered block of the pre-registration page (between the markers)."""
    start, stop = page_text.find(BEGIN), page_text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"the page has no registered block ({BEGIN!r} ... {END!r})")
    return page_text[start:stop + len(END)]


def registered_digest(page_text: str) -> str:
    return hashlib.sha256(registered_text(page_text).encode()).hexdigest()


def registration() -> dict:
    """The stored record: {"commit", "date", "sha256"} of the registration."""
    from ..paths import repo_root
    return json.loads((repo_root() / RECORD).read_text())


def _git(*args, cwd=None) -> subprocess.CompletedProcess:
    from ..paths import repo_root
    return subprocess.run(["git", *args], cwd=cwd or repo_root(), capture_output=True,
                          text=True)


def descends(commit: str, ancestor: str) -> bool:
    """Whether ``commit`` (a run's recorded commit, without '+dirty') has ``ancestor``
    in its history (git merge-base --is-ancestor)."""
    return _git("merge-base", "--is-ancestor", ancestor, commit).returncode == 0


def stored_runs(store=None) -> list:
    """Every stored confirmatory pretraining run's JSON."""
    store = store or results_dir(STORE)
    return [json.loads(p.read_text()) for p in sorted((store / "pretrain").glob("*.json"))]


def same_training_code(commit: str, ancestor: str) -> bool:
    """Whether ``commit``'s engine, model and data code (FROZEN) equals ``ancestor``'s."""
    return _git("diff", "--quiet", ancestor, commit, "--", *FROZEN).returncode == 0


def run_provenance_problems(runs, ancestor: str) -> list:
    """The runs whose recorded commit is dirty, unknown, not a descendant of the
    registration commit, or trains with other engine, model or data code than it
    (amendment 1), as text (none: [])."""
    out = []
    for run in runs:
        commit = run["provenance"]["git_commit"]
        if commit.endswith("+dirty"):
            out.append(f"{run['hash']}: trained from a dirty tree ({commit})")
        elif not descends(commit, ancestor):
            out.append(f"{run['hash']}: commit {commit} does not descend from the "
                       f"registration {ancestor}")
        elif not same_training_code(commit, ancestor):
            out.append(f"{run['hash']}: commit {commit} changed the training code "
                       f"({', '.join(FROZEN)}) since the registration")
    return out
