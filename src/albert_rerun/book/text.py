"""Values and tables the chapters share; sentences live in ``book/templates/sentences.md``."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..paths import repo_root
from ..profiles import ResolvedProfile
from ..studies.decisions import CE, levels


def summary(frame: pd.DataFrame, metric: str, scale: float = 1.0, digits: int = 3) -> pd.Series:
    """'mean [low, high]' (95% t-interval over seeds) of ``metric`` per condition."""
    from ..stats.inference import summarize
    table = summarize(frame.dropna(subset=[metric]), metric, scale=scale)

    def cell(row):
        if not np.isfinite(row["low"]):
            return f"{row['mean']:.{digits}f} (1 seed)"
        return f"{row['mean']:.{digits}f} [{row['low']:.{digits}f}, {row['high']:.{digits}f}]"
    return table.apply(cell, axis=1)


def fill(part: str, **values) -> str:
    """Section ``part`` of ``book/templates/sentences.md`` on one line, keys filled."""
    text = (repo_root() / "book" / "templates" / "sentences.md").read_text()
    sections = dict(re.findall(r"^## (\S+)\n(.*?)(?=^## |\Z)", text, re.S | re.M))
    return re.sub(r"\{\{ (\w+) \}\}", lambda m: str(values[m.group(1)]),
                  " ".join(sections[part].split()))


def metrics_table(frame: pd.DataFrame, extra: dict | None = None) -> pd.DataFrame:
    """The chapter's main table: cross-entropy and accuracy at [MASK], then ``extra``."""
    table = pd.DataFrame({"CE at [MASK] (nats)": summary(frame, CE),
                          "MLM acc. at [MASK] %": summary(frame, "mlm_accuracy_at_mask", 100, 1)})
    for name, values in (extra or {}).items():
        table[name] = values
    table.index.name = "condition"
    return table


def parameter_count(config) -> int:
    """A run's parameters (closed form)."""
    from ..model.params import closed_form
    return int(sum(closed_form(config.model).values()))


def params_column(conditions: dict) -> dict:
    """{"params (M)": parameters in millions per condition}, a ``metrics_table`` extra."""
    return {"params (M)": pd.Series({k: round(parameter_count(c) / 1e6, 3)
                                     for k, c in conditions.items()})}


def tokens_per_run(config) -> int:
    """A run's training tokens as the paper counts them: steps x batch x length."""
    return int(config.max_steps * config.batch_size * config.max_seq_length)


def times(ratio: float) -> str:
    """A ratio to two significant digits: '47,000x', '36x' (one rounding everywhere)."""
    return f"{float(f'{ratio:.2g}'):,.0f}x"


def scale_short(frame: pd.DataFrame, config) -> str:
    """'1.23M params, 5,000 steps, 2.56M tokens, 4 seeds'."""
    full, tokens = frame[frame["steps"] == frame["steps"].max()], tokens_per_run(config)
    return (f"{parameter_count(config) / 1e6:.2f}M params, {int(config.max_steps):,} steps, "
            + (f"{tokens / 1e6:.2f}M" if tokens >= 1e6 else f"{tokens:,.0f}")
            + f" tokens, {full['seed'].nunique()} seeds")


def passes_over_data(frame: pd.DataFrame, config) -> float:
    """Tokens a run saw over the tokens of its training documents."""
    from ..data.corpus import tokenize_split
    from ..data.tokenizer import Tokenizer
    corpus = tokenize_split("train", Tokenizer()).subset(config.train_documents)
    return float(frame["tokens"].max()) / len(corpus.tokens)


def finetune_grid_text(profile: ResolvedProfile) -> str:
    """The fine-tuning grid and the pilot's picks, for the methods page."""
    from ..profiles import FINETUNE_GRID
    rates = profile.finetune_rates()
    grid = ", ".join(f"{lr:g}" for lr in FINETUNE_GRID)
    return (f"{grid} (picked at the {profile.name} profile: {rates['pretrained']:g} for "
            f"pretrained encoders, {rates['untrained']:g} from random initialization)")


def gate_rule(profile: ResolvedProfile) -> str:
    """The competence gate and the stages, with the profile's numbers."""
    rungs = levels(profile)
    r = rungs["rungs"]
    return fill("gate", unigram=f"{r['unigram_loss_at_mask']:.3f}",
                bigram=f"{r['bigram_loss_at_mask']:.3f}",
                reads_context=f"{rungs['reads_context']:.3f}")
