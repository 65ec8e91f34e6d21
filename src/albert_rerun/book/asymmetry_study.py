"""The asymmetry study's values for its registration page (``values``, a ``book.values``
provider): its arms, seeds and costs, the pilot's readings it was sized on, and the power
of each decision. Numbers and short phrases only; the sentences are the page's."""
from __future__ import annotations

import re

import pandas as pd

from ..studies import asymmetry as S
from ..studies import asymmetry_pilot as P

KEY = re.compile(r"{{\s*(\w+)\s*}}")
SPEED = 20_000  # tokens a second on one thread: the confirmatory 4-layer runs' speed


def committed(store: str):
    """A study's store as committed: the registration reads only committed runs, whatever
    results folder a build or a test points at."""
    from ..paths import repo_root
    return repo_root() / "data" / "results" / store


def signed(x: float, digits: int = 3) -> str:
    """A difference with its sign, a true minus (−0.012, +0.001)."""
    return f"{x:+.{digits}f}".replace("-", "−")


def interval(estimate: float, low: float, high: float, digits: int = 3) -> str:
    return f"{signed(estimate, digits)} [{signed(low, digits)}, {signed(high, digits)}]"


def confirmatory_asymmetry() -> tuple:
    """FFN-shared minus attention-shared in the confirmatory study, 4 layers, 11 seeds:
    (mean, 95% t-interval low, high), nats, positive = the paper's direction."""
    from statsmodels.stats.weightstats import DescrStatsW

    from ..studies import confirm_analysis as A
    from ..studies import confirm_analysis as D
    frame = A.confirmatory_frame(store=committed(A.STORE))
    d = A.per_seed(D.PRIMARY[0], frame).to_numpy()
    low, high = DescrStatsW(d).tconfint_mean()
    return d.mean(), low, high


def arms_table() -> str:
    """The arms at each depth with parameters and seeds, as a markdown table."""
    counts = P.parameters()
    rows = []
    for layers in (S.SHALLOW, S.DEEP):
        seeds = S.SEEDS[layers]
        for arm in S.ARMS[layers] + (S.FIGURE_ARMS if layers == S.DEEP else ()):
            used = seeds[:S.FIGURE_SEEDS] if arm in S.FIGURE_ARMS else seeds
            rows.append({"layers": layers, "arm": arm,
                         "parameters": f"{counts[(arm, layers)]:,}",
                         "seeds": f"{used[0]}–{used[-1]} ({len(used)})"})
    return pd.DataFrame(rows).to_markdown(index=False)


def sd_levels(pilot_summary: dict) -> dict:
    """The per-seed SDs the power is given at: the pilot's common-draw SD at 1x, the
    upper end of its 80% interval (the SD ratio's F-interval), and the plain draw's."""
    from scipy import stats
    n = pilot_summary["seeds"]
    upper = (pilot_summary["sd ratio"] ** 2 * stats.f.ppf(0.9, n - 1, n - 1)) ** 0.5
    return {"common draw at 1x": pilot_summary["sd common"],
            "its 80% upper bound": min(upper, 1.0) * pilot_summary["sd plain"],
            "plain draw": pilot_summary["sd plain"]}


def power_table(sds: dict, effect: float) -> str:
    """Per decision and SD: the power at ``effect`` nats and the smallest difference found
    with 80% power, at Holm's first level."""
    rows = []
    for name, layers, _, _ in S.PRIMARY:
        n = len(S.SEEDS[layers])
        row = {"decision": name, "seeds": n}
        for label, sd in sds.items():
            row[f"SD {sd:.4f} ({label})"] = (f"{S.power(sd, n, effect):.0%}; "
                                            f"{S.detectable(sd, n):.3f}")
        rows.append(row)
    return pd.DataFrame(rows).to_markdown(index=False)


def seeds_for(sd: float, effect: float, target: float = 0.8) -> int:
    """The fewest seeds that find ``effect`` with power ``target`` at Holm's first level."""
    n = 2
    while S.power(sd, n, effect) < target:
        n += 1
    return n


def eight_layer_seeds() -> int:
    """The seeds of an 8-layer pair that the hours of the planned 12-layer pairs buy."""
    configs = S.configs()
    first = S.SEEDS[S.DEEP][0]
    deep = [configs[(arm, S.DEEP, first)] for arm in S.ARMS[S.DEEP]]
    eight = [P.arm_config(arm, 8, first) for arm in S.ARMS[S.DEEP]]
    ratio = sum(map(S.flops_per_token, deep)) / sum(map(S.flops_per_token, eight))
    return int(len(S.SEEDS[S.DEEP]) * ratio)


def reference_levels() -> dict:
    """The common held-out set's rungs, as the confirmatory study reads them."""
    from ..studies.baselines import reference_levels as levels
    return levels(P._evaluation_config())


def budget() -> dict:
    """Thread-hours at the engine's speed: the study's runs, the pilot's, their sum."""
    configs = S.configs()
    reference = configs[(S.ATTENTION, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    study = S.thread_hours(S.planned(), reference, SPEED)
    pilot = S.thread_hours(P.planned(), reference, SPEED)
    return {"study": study, "pilot": pilot, "total": study + pilot}


def deep_closed() -> float:
    """The share of the distance from the unigram rung to the left-bigram rung (on the
    curves' sequences) that the pilot's 12-layer pair closed by the end, on average over
    its two arms (their difference is not read)."""
    from ..engine.store import stored_pretrain
    levels = P.curve_levels()
    ends = [stored_pretrain(committed(P.STORE), P.deep_configs()[(arm, P.DEEP_LAYERS)])
            ["curve"][-1][P.D.CE] for arm in P.PAIR]
    return (levels["unigram"] - sum(ends) / len(ends)) / (levels["unigram"]
                                                          - levels["left bigram"])


def scale() -> dict:
    """The study's parameters and tokens against ALBERT-base's."""
    from ..paper import PAPER_BATCH, PAPER_SEQ, PAPER_STEPS, TABLE1
    counts = P.parameters()
    run = next(iter(S.configs().values()))
    tokens = run.max_steps * run.batch_size * run.max_seq_length
    return {"low": min(counts.values()), "high": max(counts.values()),
            "paper": TABLE1["albert-base"][4] * 1e6,
            "tokens times": PAPER_STEPS * PAPER_BATCH * PAPER_SEQ / tokens}


def values(profile=None) -> dict:
    """The registration page's keys (``page_values``) and its preface's
    (``record_values``)."""
    return {**page_values(), **record_values()}


def page_values() -> dict:
    """The keys of the registered text."""
    from ..stats.power import tost_power
    configs = S.configs()
    seen = confirmatory_asymmetry()
    shallow = configs[(S.ATTENTION, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    widened = configs[(S.WIDENED, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    deep = configs[(S.FFN, S.DEEP, S.SEEDS[S.DEEP][0])]
    summary = P.crn_summary(P.crn_differences(committed(P.STORE), committed("ladder")))
    margin = S.margin_of(reference_levels())
    size = scale()
    sds = sd_levels(summary)
    hours = budget()
    tokens_apart = shallow.curve_every * shallow.batch_size * shallow.max_seq_length
    return {
        "asym_confirm": interval(*seen), "asym_effect": f"{abs(seen[0]):.3f}",
        "asym_deep": str(S.DEEP), "asym_steps": f"{S.STEPS:,}",
        "asym_arms_table": arms_table(),
        "asym_width": f"{widened.model.intermediate_size:,}",
        "asym_widened_flops": f"{S.flops_per_token(widened) / S.flops_per_token(shallow):.1f}",
        "asym_figure_seeds": str(S.FIGURE_SEEDS),
        "asym_curve_examples": f"{P.CURVE_EXAMPLES:,}", "asym_curve_points": str(P.CURVE_POINTS),
        "asym_curve_tokens": f"{tokens_apart / 1e6:.1f} million",
        "asym_sd_plain": f"{summary['sd plain']:.4f}", "asym_sd_common": f"{summary['sd common']:.4f}",
        "asym_sd_ratio": f"{summary['sd ratio']:.2f}",
        "asym_sd_ratio_interval": f"[{summary['sd ratio low']:.2f}, {summary['sd ratio high']:.2f}]",
        "asym_sd_correlation": f"{summary['correlation']:.2f}",
        "asym_crn_seeds": str(summary["seeds"]),
        "asym_power_table": power_table(sds, abs(seen[0])),
        "asym_hours_study": f"{hours['study']:.1f}", "asym_hours_pilot": f"{hours['pilot']:.1f}",
        "asym_hours_total": f"{hours['total']:.1f}", "asym_cap": f"{S.CAP_HOURS:.0f}",
        "asym_speed": f"{SPEED:,}",
        "asym_deep_closed": f"{deep_closed():.0%}", "asym_end_date": S.END_DATE,
        "asym_margin": f"{margin:.4f}", "asym_confirm_mean": signed(seen[0]),
        "asym_init_std": f"{shallow.model.initializer_range:g}",
        "asym_seeds_plain": str(seeds_for(sds["plain draw"], abs(seen[0]))),
        "asym_power_deep": f"{S.power(sds['common draw at 1x'], len(S.SEEDS[S.DEEP]), seen[0]):.0%}",
        "asym_seeds_eight": str(eight_layer_seeds()),
        "asym_deep_flops": f"{S.flops_per_token(deep) / S.flops_per_token(shallow):.1f}",
        "asym_tost_deep": f"{tost_power(margin / sds['common draw at 1x'], len(S.SEEDS[S.DEEP]), 0.05 / S.TESTS):.0%}",
        "asym_params": f"{size['low'] / 1e3:.0f} to {size['high'] / 1e3:.0f} thousand",
        "asym_paper_params": f"{size['paper'] / 1e6:.0f} million",
        "asym_tokens_times": f"{size['tokens times']:,.0f} times",
    }


def record_values() -> dict:
    """The preface's keys, outside the registered text: when it was registered, and how
    many runs are stored (a count, no loss)."""
    record = S.registration()
    done = sum(reached == steps for *_, reached, steps in S.progress())
    from ..studies.ladder import SEEDS
    return {"asym_registered": (f"on {record['date']} at commit `{record['commit'][:7]}`"
                                if record else "not yet"),
            "asym_ladder_seeds": str(len(SEEDS["16x"])),
            "asym_runs_stored": str(done), "asym_runs_planned": str(len(S.configs()))}


def register(page=None) -> dict:
    """The registration record of ``PAGE`` at HEAD: its commit, date, the registered
    text's digest and the values its keys had (a test recomputes them)."""
    import datetime
    import json

    from ..paths import repo_root
    from ..studies.registration import _git, registered_digest, registered_text
    text = (page or repo_root() / S.PAGE).read_text()
    if _git("status", "--porcelain", "--", S.PAGE).stdout.strip():
        raise RuntimeError(f"commit {S.PAGE} before recording its registration")
    computed = values()
    record = {"commit": _git("rev-parse", "HEAD").stdout.strip(),
              "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                  "%Y-%m-%d %H:%M UTC"),
              "sha256": registered_digest(text), "page": S.PAGE,
              "values": {k: computed[k] for k in registered_keys(registered_text(text))}}
    (repo_root() / S.RECORD).write_text(json.dumps(record, indent=1, ensure_ascii=False)
                                        + "\n")
    return record


def registered_keys(page_text: str) -> list:
    """The ``{{ key }}`` names a page's text uses, in order of first use."""
    return list(dict.fromkeys(KEY.findall(page_text)))


if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["register"]:
        raise SystemExit("usage: python -m albert_rerun.book.asymmetry_study register")
    print(register())
