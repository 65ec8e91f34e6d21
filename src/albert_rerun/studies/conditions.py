"""The empirical claims' conditions: each claim maps condition names to pretraining
configs without the seed; a config several claims use is one stored run."""
from __future__ import annotations

from dataclasses import dataclass

from ..engine.config import PretrainConfig, untrained
from ..profiles import ResolvedProfile, resolve

SCHEMES = ("none", "attention", "ffn", "all")
SWEEP_SEED = 100  # the wide model's learning-rate sweep: a seed no comparison uses
WIDE_LEARNING_RATES = (2.5e-3, 5e-3, 1e-2)


@dataclass(frozen=True)
class ClaimSizes:
    """What each profile affords beyond the base run (profiles.pretraining_config)."""
    embedding_sizes: tuple  # the E sweep (claim 8); must include the base E and H
    wide_factor: int  # the wide ALBERT of claim 6: H times this, all shared
    transition_layers: int  # depth of the models of claim 7
    transition_step_share: float  # their steps, as a share of the base run's
    h_schemes: tuple = SCHEMES  # the asymmetry's sharing schemes at E = H


CLAIM_SIZES = {
    "smoke": ClaimSizes((8, 16, 32), 2, 4, 1.0),
    # cpu: E = H/2 and H only, the asymmetry's stored cells
    "cpu": ClaimSizes((32, 64), 2, 12, 0.5),
    "gpu": ClaimSizes((64, 128, 256), 2, 24, 0.5),
    # cpu-long: at E = H only the ends of Table 4, the cells the wall-clock claim needs
    "cpu-long": ClaimSizes((32, 64), 2, 12, 0.5, h_schemes=("none", "all")),
}


def base(profile: ResolvedProfile | str) -> PretrainConfig:
    """The ALBERT-style base of every claim: E < H, all layers shared, no dropout."""
    return resolve(profile).pretraining_config("albert")


def bert_style(profile: ResolvedProfile) -> PretrainConfig:
    """Not shared, E = H: the asymmetry table's (none, E = H) cell is this config."""
    b = base(profile)
    return b.replace_model(sharing="none", embedding_size=b.model.hidden_size)


def with_steps(config: PretrainConfig, steps: int) -> PretrainConfig:
    """The same run on a schedule of ``steps`` (warm-up and curve scaled with it)."""
    return config.replace(max_steps=steps, warmup_steps=max(2, steps // 20),
                          curve_every=max(1, steps // 8))


def asymmetry(profile: ResolvedProfile) -> dict:
    """Table 4's cells: each sharing scheme at E = base E and (those of h_schemes) E = H."""
    b = base(profile)
    E, H = b.model.embedding_size, b.model.hidden_size
    schemes = {E: SCHEMES, H: CLAIM_SIZES[profile.name].h_schemes}
    return {f"E={e}, {s}": b.replace_model(embedding_size=e, sharing=s)
            for e in (E, H) for s in schemes[e]}


def grouped(profile: ResolvedProfile) -> dict:
    """All-shared with G groups of consecutive layers; G = L is the not-shared model."""
    b = base(profile)
    L = b.model.num_hidden_layers
    return {G: b if G == 1 else b.replace_model(sharing="none") if G == L
            else b.replace_model(num_hidden_groups=G) for G in range(1, L + 1) if L % G == 0}


def sop_nsp(profile: ResolvedProfile) -> dict:
    """The base run with no sentence loss, NSP and SOP."""
    return {objective: base(profile).replace(objective=objective)
            for objective in ("none", "nsp", "sop")}


def dropout(profile: ResolvedProfile) -> dict:
    """The base run without and with dropout 0.1."""
    b = base(profile)
    return {"no dropout": b,
            "dropout 0.1": b.replace_model(hidden_dropout_prob=0.1,
                                           attention_probs_dropout_prob=0.1)}


def wide_albert(profile: ResolvedProfile, steps: int | None = None,
                learning_rate: float | None = None) -> PretrainConfig:
    """An all-shared ALBERT-style model ``wide_factor`` times wider than the BERT-style one."""
    b = base(profile)
    k = CLAIM_SIZES[profile.name].wide_factor
    H = b.model.hidden_size * k
    config = b.replace_model(hidden_size=H, intermediate_size=4 * H,
                             num_attention_heads=b.model.num_attention_heads * k)
    if steps is not None:
        config = with_steps(config, steps)
    if learning_rate is not None:
        config = config.replace(learning_rate=learning_rate)
    return config


def step_flops(config: PretrainConfig) -> float:
    """Training FLOPs of one step (3x the forward of what the model computes)."""
    from ..model.params import useful_flops
    return useful_flops(config.model, config.batch_size, config.max_seq_length,
                        config.max_predictions)


def train_flops(config: PretrainConfig) -> float:
    """Training FLOPs of a whole run."""
    return step_flops(config) * config.max_steps


def equal_flops_steps(profile: ResolvedProfile) -> int:
    """The wide model's steps in the BERT-style model's training FLOPs."""
    b = bert_style(profile)
    return max(1, round(b.max_steps * step_flops(b) / step_flops(wide_albert(profile))))


def wide_sweep(profile: ResolvedProfile) -> dict:
    """The wide model at the equal-FLOPs budget at each candidate learning rate."""
    steps = equal_flops_steps(profile)
    return {lr: wide_albert(profile, steps, lr).replace(seed=SWEEP_SEED)
            for lr in WIDE_LEARNING_RATES}


# Whose stored runs time the equal-time budget: smoke's own seconds are start-up noise,
# and cpu-long trains the same models on the same machine as cpu.
TIMING_SOURCE = {"smoke": "cpu", "cpu": "cpu", "cpu-long": "cpu", "gpu": "gpu"}
# Takes another profile's swept learning rate (its own sweep would cost more than the
# claim's runs).
SWEEP_FROM = {"cpu-long": "cpu"}


def _timing_store(source: ResolvedProfile):
    """The store holding ``source``'s timed runs: its results folder, else the committed
    one (the tests' temporary store holds no cpu runs)."""
    from ..paths import repo_root
    store = source.results
    return (store if (store / "pretrain").is_dir()
            else repo_root() / "data" / "results" / source.name)


def equal_time_steps(profile: ResolvedProfile, planning: bool = False) -> dict:
    """The wide model's steps in the BERT-style model's measured training seconds (medians
    of the ``TIMING_SOURCE`` profile's stored runs, scaled to this profile's steps);
    LookupError if missing, unless ``planning``: then the cpu profile's estimate."""
    import statistics

    from ..engine.store import read_json, stored_pretrain
    source = resolve(TIMING_SOURCE[profile.name])
    store, seeds = _timing_store(source), default_seeds(source)

    def stored(configs) -> list:
        return [r for r in (stored_pretrain(store, c) for c in configs) if r is not None]
    bert = stored(seeded(bert_style(source), seed) for seed in seeds)
    chosen = read_json(store / "choices" / "wide-learning-rate.json")
    wide = []
    if chosen:
        config = wide_albert(source, equal_flops_steps(source), chosen["learning_rate"])
        wide = stored(seeded(config, seed) for seed in seeds) or stored(wide_sweep(source).values())
    if (not bert or not wide) and planning and source.name != "cpu":
        cpu = resolve("cpu")
        estimate = equal_time_steps(cpu)
        steps = bert_style(profile).max_steps / bert_style(cpu).max_steps
        return {**estimate, "steps": max(1, round(estimate["steps"] * steps)),
                "estimate": True}
    if not bert or not wide:
        raise LookupError(f"the equal-time budget of profile {profile.name!r} needs the "
                          f"stored BERT-style runs and wide runs of profile {source.name!r} "
                          f"in {store} (found {len(bert)} and {len(wide)}): train those first")
    scale = bert_style(profile).max_steps / bert_style(source).max_steps
    seconds = statistics.median(r["metrics"]["train_seconds"] for r in bert) * scale
    per_step = statistics.median(r["metrics"]["step_seconds"] for r in wide)
    return {"steps": max(1, round(seconds / per_step)), "source": source.name,
            "bert_seconds": seconds, "wide_step_seconds": per_step,
            "runs": sorted(r["hash"] for r in bert + wide), "estimate": False}


def wall_clock(profile: ResolvedProfile, learning_rate: float, planning: bool = False) -> dict:
    """The BERT-style model and the wide ALBERT-style model (at the swept learning rate)
    for the BERT-style model's measured training seconds and, except at cpu-long, for
    its training FLOPs."""
    out = {"BERT-style": bert_style(profile), "wide ALBERT-style, equal time": wide_albert(
        profile, equal_time_steps(profile, planning)["steps"], learning_rate)}
    if profile.name != "cpu-long":
        out["wide ALBERT-style, equal FLOPs"] = wide_albert(
            profile, equal_flops_steps(profile), learning_rate)
    return out


def transitions(profile: ResolvedProfile) -> dict:
    """BERT-style and ALBERT-style (E < H, all shared) of equal width, Figure 1's depth
    where the profile affords it, on a share of the base schedule."""
    sizes = CLAIM_SIZES[profile.name]
    steps = max(1, round(base(profile).max_steps * sizes.transition_step_share))
    return {name: with_steps(config.replace_model(num_hidden_layers=sizes.transition_layers),
                             steps)
            for name, config in (("BERT-style", bert_style(profile)),
                                 ("ALBERT-style", base(profile)))}


def embedding_sweep(profile: ResolvedProfile) -> dict:
    """Not shared and all shared at each of the profile's embedding sizes."""
    b = base(profile)
    return {f"{s}, E={e}": b.replace_model(sharing=s, embedding_size=e)
            for s in ("none", "all") for e in CLAIM_SIZES[profile.name].embedding_sizes}


CLAIMS = ("asymmetry", "sop_nsp", "dropout", "embedding_sweep", "grouped", "wall_clock",
          "transitions")
# cpu-long trains the claims whose conditions can say something at four times the
# training; grouped sharing and the 12-layer transition models stay at cpu.
PROFILE_CLAIMS = {"cpu-long": ("asymmetry", "sop_nsp", "dropout", "embedding_sweep",
                               "wall_clock")}
# Trained in stretches (the driver's --hours): the book shows the decisions stored so far.
STRETCH_PROFILES = ("cpu-long",)


def profile_claims(profile: ResolvedProfile) -> tuple:
    """The claims ``profile`` trains and its chapters show."""
    return PROFILE_CLAIMS.get(profile.name, CLAIMS)


def claim_conditions(profile: ResolvedProfile, name: str, wide_learning_rate: float | None = None,
                     planning: bool = False) -> dict:
    """One claim's conditions; the wall-clock claim needs the swept learning rate."""
    if name not in CLAIMS:
        raise ValueError(f"unknown claim {name!r}; choose from {CLAIMS}")
    if name == "wall_clock":
        if wide_learning_rate is None:
            raise ValueError("the wall-clock claim's conditions need the wide model's "
                             "swept learning rate (studies.driver.wide_learning_rate)")
        return wall_clock(profile, wide_learning_rate, planning)
    return {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
            "embedding_sweep": embedding_sweep, "grouped": grouped,
            "transitions": transitions}[name](profile)


def seeded(config: PretrainConfig, seed: int) -> PretrainConfig:
    """``config`` at ``seed``."""
    return config.replace(seed=seed)


def default_seeds(profile: ResolvedProfile) -> range:
    """The profile's seeds, 0 to its default count."""
    return range(profile.default_seeds)


def distinct(configs) -> list:
    """The configs without repeats, in order of first appearance (one stored run each)."""
    from ..engine.store import config_hash
    return list({config_hash(c.to_dict()): c for c in configs}.values())


def controls(configs) -> list:
    """The distinct random-initialization controls of these seeded configs."""
    return distinct(untrained(config) for config in configs)
