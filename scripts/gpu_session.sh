#!/usr/bin/env bash
# What one lent-GPU session runs, as one prepared script (the device time is short and
# cannot be extended). In order, each step on its own time limit so that one failure
# does not cost the rest:
#   1. the whole CUDA path on the smoke profile (pretraining, probes, fine-tuning);
#   2. `albert_rerun.bench --device cuda`: ours vs HF transformers under bf16 autocast,
#      against the measured bf16 matmul peak;
#   3. the gpu profile's step-time calibration (claim 4) and Table 1 throughput, and
#      how long the data pipeline takes to mask one gpu-profile batch on one core;
#   4. the recipe grid at cpu-profile sizes, many runs side by side, until the time is
#      spent (python -m albert_rerun.recipe --grid).
# Results are packed into OUT/results.tgz every 30 s, so a run cut short still returns
# what finished. Usage:  bash scripts/gpu_session.sh OUT SECONDS [DEVICE]
set -uo pipefail
OUT=${1:?usage: gpu_session.sh OUT SECONDS [DEVICE]}
BUDGET=${2:?usage: gpu_session.sh OUT SECONDS [DEVICE]}
DEVICE=${3:-cuda}
WORKERS=${WORKERS:-12}
PY=${PYTHON:-python3}
START=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$OUT" data/results/gpu data/results/recipe-grid
SCRATCH=$(mktemp -d)

pack() {  # the stored results of this session, never checkpoints
  find data/results/gpu data/results/recipe-grid -maxdepth 2 -name '*.json' -newer "$SCRATCH" \
    -print0 | tar czf "$OUT/results.partial.tgz" --null -T - 2>/dev/null \
    && mv "$OUT/results.partial.tgz" "$OUT/results.tgz"
}
step() {  # step NAME SECONDS COMMAND...: run with a limit (never past the budget's last
  # minute); report, never stop the script
  local name=$1 limit=$2; shift 2
  local most=$(( $(left) - 60 ))
  (( limit > most )) && limit=$most
  if (( limit < 10 )); then echo "== $name: skipped, $(left) s left =="; return; fi
  echo "== $name (limit ${limit} s, $(left) s left) =="
  local t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@"; local rc=$?
  echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s =="
}

echo "== machine =="
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true
$PY -c "import torch, transformers, sentencepiece, numpy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__, 'numpy', numpy.__version__)"
nproc

step smoke 120 $PY -m albert_rerun.train --profile smoke --device "$DEVICE" --store "$SCRATCH/smoke" --fresh
step bench 150 $PY -m albert_rerun.bench --device "$DEVICE" --output "$OUT/bench-$DEVICE.json"
step calibration 120 $PY -c "from albert_rerun import claims; c = claims.calibrate('gpu'); print('ratio', c['ratio'], c['step_seconds']); t = claims.throughput('gpu'); print({k: round(v['tokens_per_second']) for k, v in t['rows'].items()})"
pack

step masking 60 $PY -c "
import time, numpy as np
from albert_rerun.tokenizer import Tokenizer
from albert_rerun.pretraining_data import MaskingConfig, create_instances, mask_batch, tokenize_split, tokenizer_arrays
from albert_rerun.profiles import pretraining_config
c = pretraining_config('gpu'); t = Tokenizer(path=None, vocab_size=c.vocab_size)
started = time.time(); inst = create_instances(tokenize_split('train', t), t, 'sop', c.max_seq_length, seed=0)
print('one epoch of instances:', len(inst), round(time.time() - started, 2), 's')
arrays, masking, rng = tokenizer_arrays(t), MaskingConfig(max_predictions=c.max_predictions), np.random.default_rng(0)
started = time.time()
for k in range(10): mask_batch(inst, np.arange(k * c.batch_size, (k + 1) * c.batch_size), arrays, masking, rng)
print('masking one gpu-profile batch:', round((time.time() - started) / 10, 4), 's')"

# 4. the grid until the time is spent; no run starts in its last two minutes
remaining=$(( $(left) - 30 ))
if (( remaining > 120 )); then
  ( while sleep 30; do pack; done ) & PACKER=$!
  step grid $(( remaining + 60 )) $PY -m albert_rerun.recipe --grid --device "$DEVICE" \
    --workers "$WORKERS" --seconds $(( remaining - 120 ))
  kill $PACKER 2>/dev/null
else
  echo "== grid: skipped, $(left) s left =="
fi
pack
echo "== packed: $(tar tzf "$OUT/results.tgz" | wc -l) results, $(left) s left =="
