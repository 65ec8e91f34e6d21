"""`make bench`: training-step throughput of our model against HF transformers'.

In ONE run, on identical configs and batches: tokens/s of a full training step
(forward, backward, AdamW) for our AlbertForPreTraining and HF's
AlbertForPreTraining (ALBERT-style, all shared) and BertForPreTraining (BERT-style),
the machine's measured matmul peak, and each model's share of that peak in useful
FLOPs. Timings are reported, never asserted.

On a CPU everything runs in fp32 against the fp32 matmul peak. With ``--device cuda``
both implementations run under bf16 autocast (as training does there), at the GPU
profile's sizes, against the measured bf16 matmul peak.
"""
from __future__ import annotations

import argparse
import os
import time

import torch

from ..model.config import ModelConfig
from ..model.modeling import AlbertForPreTraining
from .pretrain import autocast
from .provenance import record

SIZES = [  # (label, H, layers, E, batch, seq): the cpu-profile size, then wider
    ("cpu-profile H128", 128, 4, 64, 32, 128),
    ("H256", 256, 6, 128, 32, 128),
    ("H512", 512, 6, 128, 16, 128),
]
GPU_SIZES = [  # the gpu profile's model and batch, then BERT-base's width and depth
    ("gpu-profile H256", 256, 12, 128, 256, 128),
    ("H768 L12", 768, 12, 128, 64, 128),
]
VOCAB = 8000
MASKED = 20  # predictions per sequence, as the profiles


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_peak(seconds: float = 3.0, device: torch.device = torch.device("cpu")) -> float:
    """Best GFLOP/s of square matmuls on random data, now: fp32 with n = 512..2048 on
    a CPU; bf16 with n = 4096..8192 on a GPU."""
    best = 0.0
    cuda = device.type == "cuda"
    for n in ((4096, 8192) if cuda else (512, 1024, 2048)):
        dtype = torch.bfloat16 if cuda else torch.float32
        a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
        for _ in range(3 if cuda else 1):
            torch.mm(a, b)
        _sync(device)
        reps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / 3:
            torch.mm(a, b)
            reps += 1
            if cuda and reps % 10 == 0:
                _sync(device)
        _sync(device)
        best = max(best, 2 * n ** 3 * reps / (time.perf_counter() - start) / 1e9)
    return best


def useful_flops(config: ModelConfig, batch: int, seq: int, masked: int) -> float:
    """FLOPs of one training step counting only what the model needs (3x forward)."""
    H, I, E, V, L = (config.hidden_size, config.intermediate_size, config.embedding_size,
                     config.vocab_size, config.num_hidden_layers)
    tokens = batch * seq
    layer = 2 * tokens * (4 * H * H + 2 * H * I) + 2 * 2 * batch * seq * seq * H
    projection = 2 * tokens * E * H if config.has_projection else 0
    head = 2 * batch * masked * (H * E + E * V) + 2 * batch * H * H
    return 3 * (L * layer + projection + head)


def stored_flop_rate(device_kind: str) -> float:
    """Achieved training FLOP/s from stored measurements, for time predictions: on
    ``cuda`` the H200 bench's rate of our model at the gpu profile's size
    (data/results/bench/h200-cuda.json); on ``cpu`` the median over the cpu profile's
    stored runs (tokens/s times FLOPs per token)."""
    import json
    import statistics

    from ..paths import repo_root
    results = repo_root() / "data" / "results"
    if device_kind == "cuda":
        rows = json.loads((results / "bench" / "h200-cuda.json").read_text())["rows"]
        row = next(r for r in rows if r["implementation"] == "ours"
                   and r["size"].startswith("gpu-profile"))
        return row["useful_gflops"] * 1e9
    from .config import PretrainConfig
    rates = []
    for path in sorted((results / "cpu" / "pretrain").glob("*.json")):
        run = json.loads(path.read_text())
        config = PretrainConfig.from_dict(run["config"])
        if config.max_steps == 0:
            continue
        flops = useful_flops(config.model, config.batch_size, config.max_seq_length,
                             config.max_predictions)
        rates.append(flops * run["metrics"]["steps"] / run["metrics"]["train_seconds"])
    if not rates:
        raise FileNotFoundError("no stored cpu-profile runs to predict a time from")
    return statistics.median(rates)


def _batch(batch: int, seq: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, VOCAB, (batch, seq), generator=g)
    types = (torch.arange(seq) >= seq // 2).long().expand(batch, seq).contiguous()
    mask = torch.ones(batch, seq, dtype=torch.long)
    labels = torch.full((batch, seq), -100)
    for row in range(batch):
        positions = torch.randperm(seq - 2, generator=g)[:MASKED] + 1
        labels[row, positions] = ids[row, positions]
    return ids, types, mask, labels, torch.randint(0, 2, (batch,), generator=g)


def _time_steps(step, warmup: int, steps: int,
                device: torch.device = torch.device("cpu")) -> float:
    for _ in range(warmup):
        step()
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    return (time.perf_counter() - start) / steps


def _hf_config(config: ModelConfig, bert: bool):
    import transformers
    common = dict(vocab_size=config.vocab_size, hidden_size=config.hidden_size,
                  num_hidden_layers=config.num_hidden_layers,
                  num_attention_heads=config.num_attention_heads,
                  intermediate_size=config.intermediate_size, hidden_act=config.hidden_act,
                  hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                  max_position_embeddings=config.max_position_embeddings)
    if bert:
        return transformers.BertForPreTraining(transformers.BertConfig(**common))
    return transformers.AlbertForPreTraining(transformers.AlbertConfig(
        embedding_size=config.embedding_size, num_hidden_groups=1, inner_group_num=1,
        classifier_dropout_prob=0.0, **common))


def measure(label, H, layers, E, batch, seq, steps: int, peak: float,
            device: torch.device = torch.device("cpu")) -> list:
    rows = []
    ids, types, mask, labels, sentence = (t.to(device) for t in _batch(batch, seq))
    cuda = device.type == "cuda"
    for style in ("albert", "bert"):
        config = ModelConfig(vocab_size=VOCAB, embedding_size=E if style == "albert" else H,
                             hidden_size=H, num_hidden_layers=layers,
                             num_attention_heads=max(2, H // 64), intermediate_size=4 * H,
                             max_position_embeddings=seq,
                             sharing="all" if style == "albert" else "none",
                             hidden_act="gelu_new")
        flops = useful_flops(config, batch, seq, MASKED)
        ours = AlbertForPreTraining(config).to(device).train()
        theirs = _hf_config(config, bert=style == "bert").to(device).train()
        contenders = {"ours": ours, "HF": theirs}
        optimizers = {k: torch.optim.AdamW(m.parameters(), lr=1e-4) for k, m in contenders.items()}

        def ours_step():
            with autocast(device):
                loss = ours(ids, types, mask, mlm_labels=labels, sentence_labels=sentence).loss
            loss.backward()
            optimizers["ours"].step()
            optimizers["ours"].zero_grad(set_to_none=True)

        def hf_step():
            kwargs = {"next_sentence_label" if style == "bert" else "sentence_order_label": sentence}
            with autocast(device):
                loss = theirs(input_ids=ids, token_type_ids=types, attention_mask=mask,
                              labels=labels, **kwargs).loss
            loss.backward()
            optimizers["HF"].step()
            optimizers["HF"].zero_grad(set_to_none=True)

        warmup = 5 if cuda else 2
        seconds = {"ours": _time_steps(ours_step, warmup, steps, device),
                   "HF": _time_steps(hf_step, warmup, steps, device)}
        for name, s in seconds.items():
            rows.append({"size": label, "style": style, "implementation": name,
                         "tokens_per_s": batch * seq / s, "step_s": s,
                         "useful_gflops": flops / s / 1e9,
                         "fraction_of_peak": flops / s / 1e9 / peak})
        rows[-2]["speedup_vs_HF"] = seconds["HF"] / seconds["ours"]
        del ours, theirs, contenders, optimizers
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4, help="timed steps per model")
    parser.add_argument("--output", default=None, help="write the JSON record here")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="cuda: bf16 autocast at the GPU sizes, against the bf16 peak")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but no CUDA device is available")
    torch.set_num_threads(max(1, len(os.sched_getaffinity(0))))
    torch.manual_seed(0)
    precision = "bf16" if device.type == "cuda" else "fp32"
    peak = matmul_peak(device=device)
    print(f"{precision} matmul peak: {peak:.1f} GFLOP/s on {args.device}"
          + ("" if device.type == "cuda" else f" ({torch.get_num_threads()} threads)"))
    rows = []
    steps = args.steps * (5 if device.type == "cuda" else 1)
    for size in (GPU_SIZES if device.type == "cuda" else SIZES):
        rows += measure(*size, steps=steps, peak=peak, device=device)
        for row in rows[-4:]:
            extra = f"  {row['speedup_vs_HF']:.2f}x HF" if "speedup_vs_HF" in row else ""
            print(f"{row['size']:>17} {row['style']:>6} {row['implementation']:>4}: "
                  f"{row['tokens_per_s']:8,.0f} tok/s  {row['fraction_of_peak']:5.1%} of peak"
                  f"{extra}", flush=True)
    peak_after = matmul_peak(device=device)
    record_ = {"device": args.device, "precision": precision, "matmul_peak_gflops": peak,
               "matmul_peak_after_gflops": peak_after, "rows": rows, "provenance": record()}
    if args.output:
        from pathlib import Path
        from .store import atomic_write_json
        atomic_write_json(Path(args.output), record_)
    print(f"matmul peak re-measured at the end: {peak_after:.1f} GFLOP/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
