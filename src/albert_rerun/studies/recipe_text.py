"""The recipe chapter's glued words (chapter 0): the levels, the candidates, the
vocabulary comparison, the grid and what the profiles adopt, read from ``recipe.load``'s
``Search``.
"""
from __future__ import annotations


import numpy as np
import pandas as pd

from .decisions import capital
from .recipe_runs import (CANDIDATES, CE, CHOSEN, COMMON_SET, CPU_BUDGET, CPU_V1_SET,
                          OPTIMIZER_PAIR, RECIPE_SET, SEARCH_SHAPE, Search,
                          TRAINING_FIELDS, VOCABULARY_PAIR, crossing, curve_difference,
                          legacy_reference_levels, planned_grid, rounded, shape_of)


def level_texts(levels: dict) -> dict:
    """The glued levels: the search's set, the claims' common set, the cpu-v1 runs'."""
    recipe, common = levels[RECIPE_SET], levels[COMMON_SET]
    texts = {"plateau_accuracy": 100 * recipe["plateau"],
             "top_piece_share": 100 * recipe["top_share"],
             "unigram_accuracy": 100 * recipe["unigram"],
             "unigram_exit": 150 * recipe["unigram"],
             "rung_bigram": 100 * recipe["rungs"]["bigram_at_mask"],
             "rung_left_visible": 100 * recipe["rungs"]["left_visible"],
             "rung_unigram_loss": recipe["rungs"]["unigram_loss_at_mask"],
             "rung_bigram_loss": recipe["rungs"]["bigram_loss_at_mask"],
             "rung_loss_se": recipe["rungs"]["unigram_loss_se"],
             "reads_context_loss": recipe["reads_context"],
             "recipe_sequences": recipe["sequences"],
             "common_plateau_accuracy": 100 * common["plateau"],
             "common_rung_unigram": 100 * common["rungs"]["unigram_at_mask"],
             "common_rung_bigram": 100 * common["rungs"]["bigram_at_mask"],
             "common_rung_unigram_loss": common["rungs"]["unigram_loss_at_mask"],
             "common_rung_bigram_loss": common["rungs"]["bigram_loss_at_mask"],
             "common_reads_context_loss": common["reads_context"],
             "common_sequences": common["sequences"]}
    if CPU_V1_SET in levels:
        texts["v1_book_plateau_accuracy"] = 100 * levels[CPU_V1_SET]["plateau"]
        texts["v1_book_sequences"] = levels[CPU_V1_SET]["sequences"]
    return texts


def candidate_texts(runs: dict, table: pd.DataFrame, vocabulary: int) -> dict:
    """The candidates' sentences (``vocabulary``: the profiles'): which leaves the plateau
    first, the optimizer, the best run, and when each long run reads context."""
    config = runs[CHOSEN]["config"]
    m = config["model"]
    texts = {"search_size": (f"H = {m['hidden_size']}, {m['num_hidden_layers']} shared layers, "
                             f"E = {m['embedding_size']}, batch {config['batch_size']} x "
                             f"{config['max_seq_length']}"),
             "candidates_measured": f"{len(runs)} of {len(CANDIDATES)}"}
    left = table.dropna(subset=["left plateau at s"])
    if len(left):
        best = left["left plateau at s"].idxmin()
        own = legacy_reference_levels(runs[best]["config"])
        step = int(left.loc[best, "left plateau at step"])
        crossing_text = (f"is the first to cross the context-free line, after {step:,} steps "
                         f"({left.loc[best, 'left plateau at s'] / 60:.1f} minutes)")
        point = next(p for p in runs[best]["curve"] if p["step"] == step)
        margin = point["mlm_accuracy"] - own["plateau"]
        noise = np.sqrt(own["plateau"] * (1 - own["plateau"]) / own["all_targets"])
        if margin < 2 * noise:
            crossing_text += (f", by {100 * margin:.2f} points, within two standard errors "
                              f"({100 * noise:.1f} points each) of its {own['all_targets']:,} "
                              f"targets")
        texts["recipe_verdict"] = f"{best} leaves the plateau first"
    else:
        best = table["final MLM acc %"].idxmax()
        crossing_text = "does not cross the context-free line in any run"
        texts["recipe_verdict"] = f"no candidate left the plateau; best curve: {best}"
    uses = "the profiles use its optimizer, learning rate, initialization and positions"
    if runs[best]["config"]["model"]["vocab_size"] != vocabulary:
        uses += (f" with {vocabulary:,} pieces, the vocabulary the wider grid was measured "
                 f"with")
    texts["recipe_sentence"] = (f"By the accuracy rule, {best} {crossing_text}. "
                                f"{capital(uses)}.")
    fastest = table["left unigram level at s"].idxmin()
    texts["unigram_fastest"] = fastest
    texts["unigram_fastest_s"] = round(float(table.loc[fastest, "left unigram level at s"]))
    a, b = OPTIMIZER_PAIR
    if {a, b} <= set(table.index):
        texts["optimizer_choice"] = ("AdamW" if table.loc[a, "final MLM acc %"]
                                     > table.loc[b, "final MLM acc %"] else "LAMB")
    else:
        texts["optimizer_choice"] = "not decided (a candidate of the pair is missing)"
    same = table[table["vocabulary"] == vocabulary]
    best_run = same["final MLM acc %"].idxmax()
    best_metrics = runs[best_run]["metrics"]
    texts.update(best_run=best_run, best_steps=best_metrics["steps"],
                 best_minutes=best_metrics["train_seconds"] / 60,
                 best_accuracy=100 * best_metrics["mlm_accuracy"],
                 best_at_mask=float(same["at [MASK] %"].max()))
    reached = [n for n, r in runs.items()
               if crossing(r["curve"], legacy_reference_levels(r["config"])["rungs"]
                           ["bigram_at_mask"], "mlm_accuracy_at_mask", below=False)]
    texts["bigram_reading"] = (f"Past the bigram rung: {', '.join(reached)}." if reached
                               else "No run reaches the bigram rung.")
    texts["longest_reading"] = longest_reading(runs)
    texts["loss_reading"] = loss_reading(runs)
    texts["context_verdict"] = context_verdict(table)
    return texts


def vocabulary_comparison(runs: dict, table: pd.DataFrame, vocabulary: int):
    """The chosen recipe at two vocabulary sizes, each against its own rungs: a table and
    its verdict (sooner to read context, else more of its unigram-to-bigram gap closed,
    with whether one seed can tell that apart)."""
    pair = [n for n in VOCABULARY_PAIR if n in runs and CE in runs[n]["metrics"]]
    rows = []
    for name in pair:
        own, m = legacy_reference_levels(runs[name]["config"]), runs[name]["metrics"]
        r = own["rungs"]
        rows.append({"vocabulary": runs[name]["config"]["model"]["vocab_size"],
                     "candidate": name, "steps": m["steps"],
                     "tokens/s": round(m["tokens_per_second"]),
                     "unigram loss": r["unigram_loss_at_mask"],
                     "left-bigram loss": r["bigram_loss_at_mask"], "loss at [MASK]": m[CE],
                     "gap closed %": 100 * (r["unigram_loss_at_mask"] - m[CE])
                     / (r["unigram_loss_at_mask"] - r["bigram_loss_at_mask"]),
                     "gap SE %": 100 * r["unigram_loss_se"]
                     / (r["unigram_loss_at_mask"] - r["bigram_loss_at_mask"]),
                     "at [MASK] %": 100 * m["mlm_accuracy_at_mask"],
                     "unigram rung %": 100 * r["unigram_at_mask"],
                     "bigram rung %": 100 * r["bigram_at_mask"],
                     "reads context at s": table.loc[name, "reads context at s"]})
    if len(rows) < 2:
        return pd.DataFrame(rows), "the vocabulary candidate is not measured yet"
    frame = pd.DataFrame(rows).set_index("vocabulary")
    large, small = frame.index.max(), frame.index.min()
    read, gaps = frame["reads context at s"], frame["gap closed %"]
    if read.notna().any() and read.nunique(dropna=False) > 1:
        winner = read.idxmin() if read.notna().all() else read.dropna().index[0]
        how = f"reads context sooner ({read[winner] / 60:.1f} minutes)"
    else:
        winner = gaps.idxmax()
        how = "closes more of its gap" + (" (neither reads context)" if read.isna().all()
                                            else "")
    verdict = (f"with {small:,} pieces the recipe closes {gaps[small]:.0f}% of its "
               f"unigram-to-bigram gap in {frame.loc[small, 'steps']:,} steps, against "
               f"{gaps[large]:.0f}% with {large:,}. The {winner:,}-piece vocabulary {how}")
    if read.isna().all():  # compared by the gap: is the difference more than noise?
        noise = float(np.hypot(*frame["gap SE %"]))
        difference = gaps[small] - gaps[large]
        if abs(difference) < 2 * noise:
            verdict += (f", but by {abs(difference):.1f} points of gap. That is within two "
                        f"standard errors of the difference (one is {noise:.0f} points, from "
                        f"the sampling noise of a mean loss over the held-out targets): one "
                        f"seed cannot tell them apart")
    if winner != vocabulary:  # a deviation from the rule above, said as one
        verdict += (f". Deviation from the rule: the rule picks the {winner:,}-piece "
                    f"vocabulary, but the profiles keep {vocabulary:,} pieces. The reason: "
                    f"the wider grid below and every claim's runs are trained with "
                    f"{vocabulary:,} pieces, and following the rule would retrain all of "
                    f"them; {vocabulary:,} is also nearer the "
                    f"paper's 30,000. The claims compare conditions at one vocabulary, so "
                    f"the deviation moves every arm of a comparison together, not one "
                    f"against another")
    return rounded(frame.drop(columns="gap SE %")), verdict


def longest_reading(runs: dict) -> str:
    """The longest schedule's accuracy at [MASK] halfway and at its end."""
    longest = max(runs, key=lambda n: runs[n]["metrics"]["steps"])
    points = [p for p in runs[longest]["curve"] if "mlm_accuracy_at_mask" in p]
    if len(points) < 2:
        return ""
    half, last = points[len(points) // 2 - 1], points[-1]
    return (f"The longest schedule, {longest}, scores {100 * half['mlm_accuracy_at_mask']:.1f}% "
            f"at [MASK] after {half['step']:,} steps and "
            f"{100 * last['mlm_accuracy_at_mask']:.1f}% after {last['step']:,}.")


def loss_reading(runs: dict) -> str:
    """When each long run's cross-entropy at [MASK] reads context and passes the left
    bigram, in words."""
    words = []
    for name, result in runs.items():
        if CE not in result["metrics"] or result["metrics"]["steps"] < 2400:
            continue
        own, curve = legacy_reference_levels(result["config"]), result["curve"]
        hits = [crossing(curve, own["reads_context"]),
                crossing(curve, own["rungs"]["bigram_loss_at_mask"])]
        if hits == [None, None]:
            joined = "neither reads context nor passes the left-bigram rung"
        else:
            joined = " and ".join(
                f"{label} after {hit['step']:,} steps ({hit['seconds'] / 60:.1f} minutes)"
                if hit else f"never {label}"
                for label, hit in zip(("reads context", "passes the left-bigram rung"), hits))
        last = curve[-1]
        words.append(f"The run {name} {joined} ({last[CE]:.3f} nats after {last['step']:,} "
                     f"steps)")
    if not words:
        return "No stored run records its cross-entropy at [MASK] yet."
    return ("In cross-entropy at [MASK]: " + " ".join(f"{w}." for w in words))


def context_verdict(table: pd.DataFrame) -> str:
    readers = table["reads context at s"].dropna()
    if not len(readers):
        return ("By this rule no run reads context, however long its schedule: a post-LN "
                "ALBERT of this size learns to copy the visible tokens and nothing measurable "
                "from context.")
    text = (f"The earliest any run reads context by this rule is {readers.idxmin()}, after "
            f"{readers.min() / 60:.1f} minutes of training.")
    if readers.min() > CPU_BUDGET:
        text += (f" In its first {CPU_BUDGET / 60:.0f} minutes, a post-LN ALBERT of this size "
                 f"learns to copy the visible tokens and nothing measurable from context.")
    return text


def grid_texts(search: Search, table: pd.DataFrame, profile_config) -> dict:
    """The grid's sentences: which candidates read context within the budget, whether
    the profile trains the fastest four-layer one, and the checks between machines."""
    layers = profile_config.model.num_hidden_layers
    search_width = int(SEARCH_SHAPE.split("-")[0][1:])
    readers = table[table["reads within budget"]]
    deep = readers[readers["layers"] == layers]
    texts = {"grid_budget_minutes": CPU_BUDGET / 60,
             "grid_runs": f"{int(table['seeds'].sum())} runs of {len(table)} candidates"}
    if len(readers):
        fastest = readers["minute"].idxmin()
        n = readers.loc[fastest, "seeds"]
        verdict = (f"{len(readers)} of {len(table)} candidates read context within the budget "
                   f"on every seed. The fastest is {fastest} (at an estimated "
                   f"{readers.loc[fastest, 'minute']:.1f} minutes here, "
                   + ("one seed)" if n == 1 else f"on average over {n} seeds)"))
        if len(deep):
            d = deep.loc[deep["minute"].idxmin()]
            verdict += (f". The fastest with {layers} layers is {d.name}: "
                        f"{d['minute']:.1f} estimated minutes on average over {d['seeds']} "
                        f"seeds (95% interval {d['95% interval (minutes)'] or 'undefined'}), "
                        f"{d['latest']:.1f} for its slowest seed")
        else:
            verdict += f". None with {layers} layers does"
    else:
        verdict = "no grid candidate reads context within the budget"
    wide = table[table.index.str.startswith(f"H{search_width}-L{layers}-")]
    if len(wide) and not wide["reads within budget"].any():
        verdict += (f". No candidate at the candidates' width and depth (H = {search_width}, "
                    f"{layers} layers) does, at any batch size or learning rate tried")
    texts["grid_verdict"] = verdict
    texts["diverged_reading"] = (f"Diverged (loss not finite): {', '.join(search.diverged)}."
                                 if search.diverged else "No run diverged.")
    missing = [n for n in planned_grid() if n not in search.device and n not in search.diverged]
    texts["missing_reading"] = (f"Planned but neither stored nor reported diverged: "
                                f"{', '.join(missing)}." if missing else
                                "Every planned grid run is stored or reported diverged.")
    texts["profile_recipe"] = profile_recipe(search, deep, profile_config)
    texts["transfer_reading"] = transfer_reading(search)
    texts["confirm_reading"] = confirm_reading(search)
    texts["profile_transfer"] = profile_transfer(search)
    return texts


def trains_candidate(profile_config, candidate_config: dict) -> bool:
    """Whether a profile's PretrainConfig trains a stored v1 run's recipe: equal on every
    one of TRAINING_FIELDS (the model's fields compared where both schemas have them)."""
    mine = profile_config.to_dict()
    for name in TRAINING_FIELDS:
        if name == "model":
            shared = set(mine["model"]) & set(candidate_config["model"])
            if any(mine["model"][k] != candidate_config["model"][k] for k in shared):
                return False
        elif mine[name] != candidate_config[name]:
            return False
    return True


def profile_recipe(search: Search, deep: pd.DataFrame, profile_config) -> str:
    c = profile_config
    size = (f"H = {c.model.hidden_size}, {c.model.num_hidden_layers} layers, batch "
            f"{c.batch_size} x {c.max_seq_length}")
    if len(deep):
        fastest = deep["minute"].idxmin()
        if trains_candidate(c, search.device[fastest]["config"]):
            return (f"The cpu profile trains the grid's fastest {c.model.num_hidden_layers}-layer "
                    f"candidate, {fastest} ({size}), on its {CPU_BUDGET / 60:.0f}-minute "
                    f"schedule: {c.max_steps:,} steps, "
                    f"{c.max_steps * c.batch_size * c.max_seq_length:,} tokens.")
    return (f"The cpu profile does not train the grid's fastest "
            f"{c.model.num_hidden_layers}-layer candidate: it trains {size} for "
            f"{c.max_steps:,} steps.")


def transfer_reading(search: Search) -> str:
    """The chosen candidate on this CPU against the same config on the GPU."""
    here, there = search.candidates.get(CHOSEN), search.device.get(CHOSEN)
    if here is None or there is None:
        return "The chosen recipe has not been trained on both machines."
    se = legacy_reference_levels(here["config"])["rungs"]["unigram_loss_se"]
    gap = curve_difference(here["curve"], there["curve"])
    return (f"The chosen recipe ends at {here['metrics'][CE]:.3f} nats at [MASK] on this CPU "
            f"and {there['metrics'][CE]:.3f} on the GPU (bf16 autocast there). Along the "
            f"curve the two differ by at most {gap:.3f} nats, against a standard error of "
            f"{se:.3f} for the held-out set.")


def confirm_reading(search: Search) -> str:
    """The grid runs trained again on this CPU: their crossing measured here against the
    estimate from the GPU run, and their real step time against the measured one."""
    words = []
    for name, here in search.confirmations.items():
        if name not in search.device:
            continue
        config, m = here["config"], here["metrics"]
        seconds = search.step_seconds[shape_of(config)]
        level = legacy_reference_levels(config)["reads_context"]
        hit_here, hit_there = (crossing(r["curve"], level) for r in (here,
                                                                       search.device[name]))
        estimate = (f"estimated {hit_there['step'] * seconds / 60:.1f} from the GPU run"
                    if hit_there else "not at all on the GPU")
        overhead = m["train_seconds"] / (config["max_steps"] * seconds)
        words.append(
            f"{name} reads context here after {hit_here['seconds'] / 60:.1f} minutes of "
            f"training (step {hit_here['step']:,}; {estimate}) and ends at {m[CE]:.3f} nats "
            f"({m['train_seconds'] / 60:.1f} minutes for the whole schedule, {overhead:.2f} "
            f"times the measured step time)" if hit_here else
            f"{name} does not read context here within its schedule (it ends at "
            f"{m[CE]:.3f} nats)")
    if not words:
        return "No grid candidate has been trained on this CPU."
    return ("Trained again on this CPU: " + "".join(
        f"{w}{'.' if k == len(words) - 1 else '. '}" for k, w in enumerate(words)))


def _machine(result: dict) -> str:
    return result["provenance"]["machine"].get("gpu") or "this CPU"


def profile_transfer(search: Search) -> str:
    """Engine v1's cpu base run, seed 0, trained again on this CPU, against the stored run
    of cpu-v1 (the cpu runs engine v1 trained, which no claim reads) with the same config."""
    if search.transfer is None:
        return ""
    replica, stored = search.transfer
    if _machine(replica) == _machine(stored):
        return ""
    a, b = replica["metrics"], stored["metrics"]
    book = legacy_reference_levels(stored["config"])
    curve_set = legacy_reference_levels({**replica["config"],
                                         "eval_examples": replica["curve"][0]["examples"]})
    hit = crossing(replica["curve"], curve_set["reads_context"])
    return (
        f"The search's engine also trained {search.texts['v1_book_runs']} cpu runs with "
        f"this recipe as their base (data/results/cpu-v1/; no claim reads them). Their "
        f"base run's seed 0, trained on {_machine(stored)} and again on this CPU "
        f"(data/results/transfer/cpu/), ends at {a[CE]:.3f} nats at [MASK] here against "
        f"{b[CE]:.3f} there, on those runs' held-out set of {book['sequences']} SOP pairs "
        f"(reads-context threshold {book['reads_context']:.3f}). Their curve points differ by "
        f"at most {curve_difference(replica['curve'], stored['curve']):.3f}. MLM accuracy "
        f"{100 * a['mlm_accuracy']:.2f}% against {100 * b['mlm_accuracy']:.2f}%, SOP accuracy "
        f"of its head {100 * a['sop_accuracy_head']:.1f}% against "
        f"{100 * b['sop_accuracy_head']:.1f}%. "
        + (f"On the {curve_set['sequences']} sequences its curve scores it goes below their "
           f"threshold ({curve_set['reads_context']:.3f}) at step {hit['step']:,}, after "
           f"{hit['seconds'] / 60:.1f} minutes of training. " if hit else
           f"On the {curve_set['sequences']} sequences its curve scores it does not go below "
           f"their threshold ({curve_set['reads_context']:.3f}). ")
        + f"Its whole run took {replica['wall_seconds'] / 60:.1f} minutes here, "
        f"{a['train_seconds'] / 60:.1f} of them training ({a['tokens_per_second']:,.0f} "
        f"tokens/s on {replica['provenance']['machine']['torch_threads']} threads).")
