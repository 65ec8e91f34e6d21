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
    from ..studies import confirm_design as D
    frame = A.confirmatory_frame()
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


def budget() -> dict:
    """Thread-hours at the engine's speed: the study's runs, the pilot's, their sum."""
    configs = S.configs()
    reference = configs[(S.ATTENTION, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    study = S.thread_hours(S.planned(), reference, SPEED)
    pilot = S.thread_hours(P.planned(), reference, SPEED)
    return {"study": study, "pilot": pilot, "total": study + pilot}


def values(profile=None) -> dict:
    """The registration page's keys."""
    configs = S.configs()
    seen = confirmatory_asymmetry()
    shallow = configs[(S.ATTENTION, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    widened = configs[(S.WIDENED, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    summary = P.crn_summary(P.crn_differences())
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
    }


def registered_keys(page_text: str) -> list:
    """The ``{{ key }}`` names a page's text uses, in order of first use."""
    return list(dict.fromkeys(KEY.findall(page_text)))
