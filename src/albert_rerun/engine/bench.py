"""`make bench`: the training loop's throughput beside the bare step, HF transformers
and the loop of commit be70d44, measured in one run.

At a profile's base size (``profiles.pretraining_config``: the cpu profile on a CPU, the
gpu profile with ``--device cuda``), each measurement is one child process:

- ``loop``: ours as ``pretrain()`` trains: ``DeviceStream`` (segment pairs and masks on
  the device), LAMB, ``pretrain.train_step``, the loss read every ``LOG_EVERY`` steps;
- ``bare``: ours, the same model and step on one fixed batch (no data, no masking);
- ``hf``: HF transformers' AlbertForPreTraining (ALBERT style) or BertForPreTraining
  (BERT style) at the same sizes, on the same batch, with the same optimizer;
- ``today``: the loop of commit ``TODAY`` (numpy masking in a thread, dynamic shapes),
  run from a copy of that commit's ``src/`` (``git archive``) on this checkout's data.

``loop`` and ``bare`` run with ``torch.compile`` off and on. The kinds are interleaved
over ``--repeats`` rounds, each reports its median; the matmul peak (fp32 on a CPU,
bf16 on a GPU) is measured before and after. ``--packed N`` adds N loop processes side
by side, started together, and their aggregate tokens/s. On a GPU every step runs
under bf16 autocast, as training does; the code is the same, with the device swapped.

Timings are reported, never asserted: this machine may be busy.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from ..model.config import ModelConfig
from ..model.params import useful_flops

TODAY = "be70d44"  # the engine before the device-side data stream (numpy masking)
GPU_BENCH = "gpu-profile-cuda.json"  # under data/results/bench/


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


def stored_gpu_bench() -> Path:
    """The GPU bench record predictions read: the gpu profile's (scripts/device_gpu.sh
    writes GPU_BENCH), else the first H200 session's (bare steps, an older gpu size)."""
    from ..paths import repo_root
    folder = repo_root() / "data" / "results" / "bench"
    return folder / GPU_BENCH if (folder / GPU_BENCH).is_file() else folder / "h200-cuda.json"


def stored_flop_rate(device_kind: str) -> float:
    """Achieved training FLOP/s from stored measurements, for time predictions: on
    ``cuda`` the best of the gpu-profile bench's loop and packed aggregate (its first
    H200 session's bare step at the gpu profile's size where that bench is not stored
    yet); on ``cpu`` the median over the cpu profile's stored runs (tokens/s times FLOPs
    per token)."""
    from ..paths import repo_root
    if device_kind == "cuda":
        record = json.loads(stored_gpu_bench().read_text())
        if "measurements" in record:
            rates = [m["useful_gflops"] for m in record["measurements"]
                     if m["kind"] == "loop" and m["style"] == "albert"]
            rates += [p["useful_gflops"] for p in record.get("packed", [])]
            return max(rates) * 1e9
        row = next(r for r in record["rows"] if r["implementation"] == "ours"
                   and r["size"].startswith("gpu-profile"))
        return row["useful_gflops"] * 1e9
    from .config import PretrainConfig
    rates = []
    for path in sorted((repo_root() / "data" / "results" / "cpu" / "pretrain").glob("*.json")):
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


# -- one measurement (a child process) -----------------------------------------------

def _hf_model(config: ModelConfig, bert: bool):
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


def _hf_step(model, optimizer, config, batch: dict, device, bert: bool):
    """HF's training step on our static-layout batch: labels at every position (HF
    scores the V-way logits everywhere), the same schedule, clipping and optimizer."""
    from .pretrain import autocast, learning_rate
    labels = torch.full_like(batch["input_ids"], -100)
    labels.scatter_(1, batch["mlm_positions"], batch["mlm_labels"])  # padding slots: -100
    sentence = {"next_sentence_label" if bert else "sentence_order_label":
                batch["sentence_labels"]}

    def step(s: int):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(config, s)
        with autocast(device):
            loss = model(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"],
                         attention_mask=batch["attention_mask"], labels=labels,
                         **sentence).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()
    return step


def _wait_for_parties(folder: str, parties: int, index: int) -> None:
    """A file barrier: packed processes start their clocks together."""
    Path(folder, f"ready-{index}").touch()
    while len(list(Path(folder).glob("ready-*"))) < parties:
        time.sleep(0.01)


def measure(spec: dict) -> dict:
    """One measurement of ``spec`` (kind, style, profile, device, compile, warmup,
    steps; packed: barrier, parties, index, seconds) in this process."""
    from ..data.corpus import tokenize_split
    from ..data.tokenizer import Tokenizer
    from ..model.modeling import AlbertForPreTraining
    from ..profiles import pretraining_config
    from .pretrain import (LOG_EVERY, DeviceStream, cpu_threads, make_optimizer,
                           resolve_device, train_step)
    device = resolve_device(spec["device"])
    torch.set_num_threads(cpu_threads())
    config = pretraining_config(spec["profile"], spec["style"])
    tokenizer = Tokenizer(vocab_size=config.vocab_size)
    corpus = tokenize_split("train", tokenizer).subset(config.train_documents)
    stream = DeviceStream(config, tokenizer, corpus, device)
    fixed = stream.batch(0)
    torch.manual_seed(config.seed)
    if spec["kind"] == "hf":
        model = _hf_model(config.model, spec["style"] == "bert").to(device).train()
    else:
        model = AlbertForPreTraining(config.model).to(device)
    optimizer = make_optimizer(model, config)
    step_model = torch.compile(model) if spec["compile"] else model
    if spec["kind"] == "hf":
        hf = _hf_step(step_model, optimizer, config, fixed, device, spec["style"] == "bert")

    def step(s: int):
        if spec["kind"] == "hf":
            return hf(s), fixed["attention_mask"]
        batch = stream.batch(s) if spec["kind"] == "loop" else fixed
        return train_step(step_model, model, optimizer, config, batch, s, device), \
            batch["attention_mask"]

    loss_sum = torch.zeros((), device=device)
    tokens = torch.zeros((), dtype=torch.long, device=device)
    for s in range(spec["warmup"]):
        step(s)
    if "barrier" in spec:
        _wait_for_parties(spec["barrier"], spec["parties"], spec["index"])
    _sync(device)
    first, s, start, cpu = spec["warmup"], spec["warmup"], time.perf_counter(), time.process_time()
    while (s - first < spec["steps"]) if "seconds" not in spec else (
            time.perf_counter() - start < spec["seconds"]):
        loss, mask = step(s)
        loss_sum += loss
        tokens += mask.sum()
        s += 1
        if s % LOG_EVERY == 0:
            float(loss_sum)  # the engine reads the loss this often (it waits for the device)
        elif "seconds" in spec and s % 10 == 0:
            _sync(device)  # the window's clock: what ran, not what was queued
    _sync(device)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    stream.close()
    return {"steps": s - first, "seconds": seconds, "step_s": seconds / (s - first),
            "cpu_step_s": cpu / (s - first), "tokens_per_s": int(tokens) / seconds,
            "loss": float(loss_sum) / (s - first), "threads": torch.get_num_threads()}


# `today`: the body of be70d44's pretrain() loop (less its curve points), timed the same
# way; it runs with that commit's src/ first on the path.
TODAY_CHILD = r"""
import json, sys, time, torch
from albert_rerun import train
from albert_rerun.pretraining_data import tokenize_split
from albert_rerun.profiles import pretraining_config
from albert_rerun.tokenizer import Tokenizer
spec = json.loads(sys.argv[1])
config = pretraining_config(spec["profile"], spec["style"], device=spec["device"],
                            finetune=None)
device = train.resolve_device(config.device)
torch.set_num_threads(train.cpu_threads())
tokenizer = Tokenizer(path=None, vocab_size=config.vocab_size)
torch.manual_seed(config.seed)
model = train.AlbertForPreTraining(config.model).to(device)
optimizer = train.make_optimizer(model, config)
corpus = tokenize_split("train", tokenizer).subset(config.train_documents)
stream = train.BatchStream(config, tokenizer, corpus, 0)
def step(s):
    batch = {k: v.to(device, non_blocking=True) for k, v in stream.next(s).items()}
    for group in optimizer.param_groups:
        group["lr"] = train.learning_rate(config, s, 0.0)
    torch.manual_seed(config.seed * 1_000_003 + s)
    with train.autocast(device):
        out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"],
                    mlm_labels=batch["mlm_labels"], sentence_labels=batch["sentence_labels"])
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return out.loss.item(), int(batch["attention_mask"].sum())
for s in range(spec["warmup"]):
    step(s)
loss = tokens = 0
start, cpu = time.perf_counter(), time.process_time()
for s in range(spec["warmup"], spec["warmup"] + spec["steps"]):
    l, t = step(s)
    loss, tokens = loss + l, tokens + t
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
stream.close()
print("BENCH " + json.dumps({"steps": spec["steps"], "seconds": seconds,
      "step_s": seconds / spec["steps"], "cpu_step_s": cpu / spec["steps"],
      "tokens_per_s": tokens / seconds, "loss": loss / spec["steps"],
      "threads": torch.get_num_threads()}))
"""


def today_source(folder: Path) -> Path:
    """``src/`` of commit TODAY, extracted under ``folder`` (git archive; no checkout)."""
    from ..paths import repo_root
    archive = subprocess.run(["git", "-C", str(repo_root()), "archive", TODAY, "src"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"


def _child_command(spec: dict, today_src: Path | None):
    """(argv, environment) of the child process measuring ``spec``."""
    from ..paths import repo_root
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TQDM_DISABLE": "1"}
    if spec.get("threads"):
        env["ALBERT_RERUN_THREADS"] = str(spec["threads"])
    if spec["kind"] == "today":
        env.update(PYTHONPATH=str(today_src), ALBERT_RERUN_ROOT=str(repo_root()))
        return [sys.executable, "-c", TODAY_CHILD, json.dumps(spec)], env
    return [sys.executable, "-m", "albert_rerun.engine.bench", "--child",
            json.dumps(spec)], env


def _result(process: subprocess.CompletedProcess, spec: dict) -> dict:
    lines = [l for l in process.stdout.splitlines() if l.startswith("BENCH ")]
    if process.returncode or not lines:
        raise RuntimeError(f"bench child {label(spec)} failed (exit {process.returncode}):"
                           f"\n{process.stderr[-3000:]}")
    return json.loads(lines[-1][len("BENCH "):])


def run_child(spec: dict, today_src: Path | None = None, timeout: float = 1800) -> dict:
    argv, env = _child_command(spec, today_src)
    process = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    return _result(process, spec)


def run_packed(spec: dict, parties: int, seconds: float, threads: int | None,
               timeout: float = 1800) -> list:
    """``parties`` loop processes side by side, clocks started together, each timed
    over the same ``seconds``: their results."""
    with tempfile.TemporaryDirectory() as folder:
        children = []
        for index in range(parties):
            part = {**spec, "barrier": folder, "parties": parties, "index": index,
                    "seconds": seconds, "threads": threads}
            argv, env = _child_command(part, None)
            children.append((part, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                                    stderr=subprocess.PIPE, text=True)))
        try:
            return [_result(subprocess.CompletedProcess(child.args, child.returncode,
                                                        *child.communicate(timeout=timeout)),
                            part) for part, child in children]
        finally:  # one failed: end the others (its own children, by their ids)
            for _, child in children:
                if child.poll() is None:
                    child.kill()
                    child.wait()


def label(spec: dict) -> str:
    return f"{spec['kind']} {spec['style']}" + (" compiled" if spec.get("compile") else "")


# -- the whole bench ----------------------------------------------------------------------

def plan(profile: str, device: str, loop_steps: int, bare_steps: int, hf_steps: int,
         compile: bool = True, today: bool = True, threads: int | None = None,
         hf: bool = True) -> list:
    """The measurements, in the order each round runs them; each child process at
    ``threads`` torch threads (None: the cores it may use). ``hf=False`` leaves out HF
    transformers' two models (a dry run's plumbing check)."""
    from ..profiles import pretraining_config
    from .pretrain import CHUNK_SEQUENCES
    chunk = max(1, CHUNK_SEQUENCES // pretraining_config(profile).batch_size)
    loop_warmup = 2  # a dry run's few steps
    if loop_steps >= chunk:  # whole masking chunks, timed from a chunk's first step
        loop_steps = chunk * round(loop_steps / chunk)
        loop_warmup = chunk * -(-10 // chunk)

    def spec(kind, style="albert", compiled=False, steps=bare_steps, warmup=None):
        return {"kind": kind, "style": style, "compile": compiled, "profile": profile,
                "device": device, "steps": steps, "threads": threads,
                "warmup": warmup if warmup is not None else max(2, steps // 5)}
    specs = [spec("loop", steps=loop_steps, warmup=loop_warmup), spec("bare")]
    if today:
        specs.append(spec("today", steps=loop_steps, warmup=loop_warmup))
    specs += [spec("hf", steps=hf_steps), spec("bare", "bert"), spec("hf", "bert", steps=hf_steps)]
    if compile:  # compilation happens in the warm-up steps
        specs += [spec("loop", compiled=True, steps=loop_steps, warmup=loop_warmup),
                  spec("bare", compiled=True)]
    return specs if hf else [s for s in specs if s["kind"] != "hf"]


def step_gflop(spec: dict) -> float:
    """Useful GFLOP of one training step of ``spec``'s profile and style."""
    from ..profiles import pretraining_config
    config = pretraining_config(spec["profile"], spec["style"])
    return useful_flops(config.model, config.batch_size, config.max_seq_length,
                        config.max_predictions) / 1e9


def _summary(spec: dict, rounds: list, peak: float) -> dict:
    """Medians over the rounds that ran (a failed child leaves its error instead)."""
    done = [r for r in rounds if "error" not in r]
    out = {**{k: spec[k] for k in ("kind", "style", "compile", "steps", "warmup")},
           "rounds": rounds}
    if not done:
        return out
    step_s = statistics.median(r["step_s"] for r in done)
    gflops = step_gflop(spec) / step_s
    return {**out, "step_s": step_s,
            "cpu_step_s": statistics.median(r["cpu_step_s"] for r in done),
            "tokens_per_s": statistics.median(r["tokens_per_s"] for r in done),
            "useful_gflops": gflops, "fraction_of_peak": gflops / peak}


def ratios(measurements: list) -> dict:
    """loop / bare (steps/s: same shapes), ours / today (tokens/s, both from the corpus),
    ours / HF (steps/s on the same batch, per style), compiled / eager (steps/s)."""
    by = {(m["kind"], m["style"], m["compile"]): m for m in measurements if "step_s" in m}

    def faster(a, b, field="step_s"):  # how many times a's rate is b's
        if a not in by or b not in by:
            return None
        if field == "tokens_per_s":
            return by[a]["tokens_per_s"] / by[b]["tokens_per_s"]
        return by[b][field] / by[a][field]
    out = {"loop_over_bare": faster(("loop", "albert", False), ("bare", "albert", False)),
           "ours_over_today": faster(("loop", "albert", False), ("today", "albert", False),
                                     "tokens_per_s"),
           "ours_over_hf_albert": faster(("bare", "albert", False), ("hf", "albert", False)),
           "ours_over_hf_bert": faster(("bare", "bert", False), ("hf", "bert", False)),
           "compiled_over_eager_loop": faster(("loop", "albert", True), ("loop", "albert", False)),
           "compiled_over_eager_bare": faster(("bare", "albert", True), ("bare", "albert", False)),
           "compiled_loop_over_bare": faster(("loop", "albert", True), ("bare", "albert", True)),
           # the same in process CPU time (all threads): steadier on a busy machine, but
           # it counts a data thread's overlapped work as cost
           "loop_over_bare_cpu_time": faster(("loop", "albert", False), ("bare", "albert", False),
                                             "cpu_step_s"),
           "compiled_over_eager_loop_cpu_time": faster(("loop", "albert", True),
                                                       ("loop", "albert", False), "cpu_step_s")}
    return {k: v for k, v in out.items() if v is not None}


def bench(profile: str, device: str, repeats: int, loop_steps: int, bare_steps: int,
          hf_steps: int, compile: bool = True, today: bool = True, packed=(),
          packed_seconds: float = 10.0, threads: int | None = None,
          output: Path | None = None, hf: bool = True) -> dict:
    """Every measurement of ``plan``, interleaved over ``repeats`` rounds, then the
    packed runs; the record (written to ``output`` after every round). The matmul peak
    is measured at the children's ``threads`` (None: all cores)."""
    from .provenance import record
    target = torch.device(device)
    cores = len(os.sched_getaffinity(0))
    torch.set_num_threads(threads or cores)
    precision = "bf16" if target.type == "cuda" else "fp32"
    peak = matmul_peak(device=target)
    print(f"{precision} matmul peak: {peak:,.1f} GFLOP/s on {device} "
          f"({torch.get_num_threads()} of {cores} cores)", flush=True)
    result = {"device": device, "profile": profile, "precision": precision,
              "matmul_peak_gflops": peak, "threads": torch.get_num_threads(), "cores": cores,
              "repeats": repeats, "today_commit": TODAY}
    with tempfile.TemporaryDirectory() as folder:
        today_src = None
        if today:
            try:
                today_src = today_source(Path(folder))
            except (OSError, subprocess.CalledProcessError) as error:  # no git history
                result["today_unavailable"] = f"{type(error).__name__}: {error}"
        specs = plan(profile, device, loop_steps, bare_steps, hf_steps, compile,
                     today_src is not None, threads, hf)
        rounds: dict = {i: [] for i in range(len(specs))}
        for r in range(repeats):
            for i, spec in enumerate(specs):
                try:
                    outcome = run_child(spec, today_src)
                    print(f"round {r + 1}/{repeats} {label(spec):>22}: "
                          f"{outcome['tokens_per_s']:>10,.0f} tokens/s, "
                          f"{outcome['step_s'] * 1e3:8.2f} ms/step", flush=True)
                except (RuntimeError, subprocess.TimeoutExpired) as error:  # the rest go on
                    outcome = {"error": str(error)[-2000:]}
                    print(f"round {r + 1}/{repeats} {label(spec):>22}: FAILED {error}",
                          flush=True)
                rounds[i].append(outcome)
                result["measurements"] = [_summary(s, rounds[k], peak)
                                          for k, s in enumerate(specs)]
                result["ratios"] = ratios(result["measurements"])
                if output:  # after every child: a bench cut short keeps what it measured
                    _write(output, result)
    loop = next(s for s in specs if s["kind"] == "loop")
    result["packed"] = []
    for parties in packed:
        threads = max(1, cores // parties)
        try:
            outcomes = run_packed(loop, parties, packed_seconds, threads)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            print(f"{parties} loops side by side: FAILED {error}", flush=True)
            continue
        total = sum(o["tokens_per_s"] for o in outcomes)
        gflops = step_gflop(loop) * sum(1 / o["step_s"] for o in outcomes)
        result["packed"].append({"parties": parties, "threads": threads, "rounds": outcomes,
                                 "seconds": packed_seconds, "aggregate_tokens_per_s": total,
                                 "useful_gflops": gflops, "fraction_of_peak": gflops / peak})
        print(f"{parties} loops side by side ({threads} threads each): {total:,.0f} tokens/s "
              f"in all", flush=True)
        if output:
            _write(output, result)
    result["matmul_peak_after_gflops"] = matmul_peak(device=target)
    result["provenance"] = record()
    if output:
        _write(output, result)
    return result


def _write(path: Path, payload: dict) -> None:
    from .store import atomic_write_json
    atomic_write_json(path, payload)


def report(result: dict) -> None:
    """The medians, each kind's share of the peak, and the ratios."""
    for m in result["measurements"]:
        if "step_s" not in m:
            print(f"{label(m):>22}: failed")
            continue
        print(f"{label(m):>22}: {m['tokens_per_s']:>10,.0f} tokens/s  {m['step_s'] * 1e3:8.2f} "
              f"ms/step  {m['fraction_of_peak']:6.1%} of the {result['precision']} peak")
    for p in result["packed"]:
        print(f"{p['parties']:>3} loops side by side: {p['aggregate_tokens_per_s']:>10,.0f} "
              f"tokens/s in all, {p['fraction_of_peak']:6.1%} of the peak")
    for name, value in result["ratios"].items():
        print(f"{name:>26}: {value:.2f}x")
    print(f"matmul peak {result['matmul_peak_gflops']:,.1f} GFLOP/s, "
          f"{result['matmul_peak_after_gflops']:,.1f} at the end")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="cuda: the gpu profile under bf16 autocast, against the bf16 peak")
    parser.add_argument("--profile", default=None,
                        help="sizes (default: cpu on a CPU, gpu with --device cuda)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--loop-steps", type=int, default=None,
                        help="timed loop steps (whole masking chunks)")
    parser.add_argument("--bare-steps", type=int, default=None, help="timed bare steps")
    parser.add_argument("--hf-steps", type=int, default=None, help="timed HF steps")
    parser.add_argument("--no-compile", dest="compile", action="store_false",
                        help="skip the torch.compile measurements")
    parser.add_argument("--no-today", dest="today", action="store_false",
                        help=f"skip the loop of commit {TODAY}")
    parser.add_argument("--no-hf", dest="hf", action="store_false",
                        help="skip HF transformers' ALBERT and BERT (a plumbing check)")
    parser.add_argument("--packed", type=int, nargs="*", default=None,
                        help="loops side by side (default: 2 on a CPU, 4 and 8 on a GPU)")
    parser.add_argument("--packed-seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per measured process (default: 1 on a CPU of "
                        "2 or more cores, as each of the cpu driver's workers; all on a GPU)")
    parser.add_argument("--output", default=None, help="write the JSON record here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print("BENCH " + json.dumps(measure(json.loads(args.child))), flush=True)
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but no CUDA device is available")
    from ..profiles import PROFILES
    cuda = args.device == "cuda"
    profile = args.profile or ("gpu" if cuda else "cpu")
    if profile not in PROFILES:
        parser.error(f"--profile must be one of {tuple(PROFILES)}")
    cores = len(os.sched_getaffinity(0))
    threads = args.threads or (None if cuda or cores < 2 else 1)
    result = bench(profile, args.device, args.repeats,
                   args.loop_steps or (400 if cuda else 256),
                   args.bare_steps or (100 if cuda else 100),
                   args.hf_steps or (50 if cuda else 30), args.compile, args.today,
                   args.packed if args.packed is not None else ((4, 8) if cuda else (2,)),
                   args.packed_seconds, threads, Path(args.output) if args.output else None,
                   args.hf)
    report(result)
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))
