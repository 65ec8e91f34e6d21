#!/usr/bin/env bash
# The one prepared script of a lent-GPU session: the gpu profile in two calls of at most
# 10 minutes each (the device time is short and cannot be extended).
#
#   bash scripts/device_gpu.sh --part 1    # bench, then the claims' runs
#   bash scripts/device_gpu.sh --part 2    # the claims' runs the first call left
#
# Each call, in order:
#   1. checks the tree: the package and its dependencies import, every data file matches
#      data/MANIFEST.sha256 (albert_rerun.data.files.verify_inputs), a GPU is present
#      (not with --dry-run);
#   2. part 1: the bench (python -m albert_rerun.engine.bench --device cuda: loop, bare
#      step, HF, compile on/off, bf16 peak, packed runs), written to
#      data/results/bench/gpu-profile-cuda.json and $OUT;
#   3. the claims' runs not yet stored (python -m albert_rerun.studies --stages
#      pretrain), with a start deadline: no run starts after --seconds less --reserve
#      from the call's start;
#   4. packs what finished into $OUT every 30 s and at the end: results.tgz (every JSON
#      of the profile's results: runs, choices, evaluations), weights.tar.0.. (this call's
#      float16 weights, 15 MiB a file, at most WEIGHTS_MIB in all: what comes back from
#      the device is bounded), the log; and prints each run's tokens/s.
# A later run of the same command trains only what is missing: stored runs are reused
# once the packed results of the earlier calls are unpacked into the tree (tar xzf
# results.tgz; cat weights.tar.* | tar x), and on a machine still warm a run cut short
# resumes from its checkpoint (ignored files stay there between calls).
# The H200 image lacks pytorch-optimizer (LAMB): download its wheel into .whl/ here
# (python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12
# --implementation cp --platform manylinux_2_28_x86_64 -d .whl pytorch-optimizer==4.1.0)
# and carry .whl; the script installs what .whl holds first.
#
# Options: --part 1|2, --seconds S (the call's budget, default 570), --reserve R (default
# 150: the longest run's time, so that a run started before the deadline ends in time),
# --workers W (runs side by side, default 4; 1 with --dry-run), --claims C... (only these claims),
# --dry-run (no GPU needed: the smoke profile on the CPU, a tiny bench; the test),
# --no-bench (part 1 without its bench: a rerun that only completes the runs).
set -uo pipefail
PART=""; BUDGET=570; RESERVE=150; WORKERS=""; DRY=0; PROFILE=""; CLAIMS=(); BENCH_ON=1
while (( $# )); do
  case $1 in
    --part) PART=$2; shift 2 ;;
    --seconds) BUDGET=$2; shift 2 ;;
    --reserve) RESERVE=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --profile) PROFILE=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    --no-bench) BENCH_ON=0; shift ;;
    --claims) shift; while (( $# )) && [[ $1 != --* ]]; do CLAIMS+=("$1"); shift; done ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ $PART == 1 || $PART == 2 ]] || { echo "--part must be 1 or 2" >&2; exit 2; }
OUT=${OUT:?set OUT to the folder whose files come back}
if (( DRY )); then PROFILE=${PROFILE:-smoke}; DEVICE=cpu; WORKERS=${WORKERS:-1}
else PROFILE=${PROFILE:-gpu}; DEVICE=cuda; WORKERS=${WORKERS:-4}; fi
WEIGHTS_MIB=${WEIGHTS_MIB:-45}
PY=${PYTHON:-python3}
START=$(date +%s)
if compgen -G ".whl/*.whl" > /dev/null; then  # wheels the device image lacks (carried)
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TQDM_DISABLE=1
mkdir -p "$OUT"
LOG="$OUT/part-$PART.log"
exec > >(tee -a "$LOG") 2>&1
MARK=$(mktemp)  # files newer than this are this call's

echo "== part $PART of the $PROFILE profile on $DEVICE, budget $BUDGET s =="
# 1. the tree
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || true
$PY -c "import torch, numpy, sentencepiece, safetensors, pytorch_optimizer, transformers
import albert_rerun.studies.driver, albert_rerun.engine.bench
print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers',
      transformers.__version__, 'numpy', numpy.__version__)" || { echo "imports fail"; exit 3; }
$PY -c "from albert_rerun.data.files import verify_inputs; verify_inputs(); print('data files match the manifest')" \
  || { echo "the data files do not match data/MANIFEST.sha256"; exit 3; }
if (( ! DRY )); then
  $PY -c "import sys, torch; sys.exit(not torch.cuda.is_available())" \
    || { echo "no GPU: run with --dry-run to check the plumbing on a CPU"; exit 3; }
fi
STORE=$($PY -c "from albert_rerun.engine.store import results_dir; print(results_dir('$PROFILE'))") || exit 3
mkdir -p "$STORE"
echo "cores: $(nproc); results: $STORE"

pack() {  # the profile's JSON results, and this call's weights up to WEIGHTS_MIB
  (cd "$STORE" && find . -name '*.json' -not -path '*/checkpoints/*' -print0 \
    | tar czf "$OUT/results.partial" --null -T - 2>/dev/null) && mv "$OUT/results.partial" "$OUT/results.tgz"
  local weights
  weights=$(cd "$STORE" && find pretrain -name '*.safetensors' -newer "$MARK" 2>/dev/null | sort)
  if [[ -n $weights ]]; then
    local bytes
    bytes=$(cd "$STORE" && du -cb $weights | tail -1 | cut -f1)
    (( bytes > WEIGHTS_MIB * 1024 * 1024 )) && echo "warning: this call's weights" \
      "($(( bytes >> 20 )) MiB) exceed WEIGHTS_MIB=$WEIGHTS_MIB: the last ones stay behind"
    rm -f "$OUT"/weights.partial.*
    (cd "$STORE" && tar cf - $weights) | head -c $(( WEIGHTS_MIB * 1024 * 1024 )) \
      | split -b 15M -d -a 1 - "$OUT/weights.partial."
    rm -f "$OUT"/weights.tar.*
    for f in "$OUT"/weights.partial.*; do mv "$f" "$OUT/weights.tar.${f##*.}"; done
  fi
}
step() {  # step NAME LIMIT COMMAND...: never past the call's budget; report, go on
  local name=$1 limit=$2; shift 2
  local most=$(( $(left) - 15 ))
  (( limit > most )) && limit=$most
  if (( limit < 10 )); then echo "== $name: skipped, $(left) s left =="; return 0; fi
  echo "== $name (limit $limit s, $(left) s left) =="
  local t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@"; local rc=$?
  echo "== $name: exit $rc after $(( $(date +%s) - t0 )) s =="
}

( while sleep 30; do pack; done ) & PACKER=$!
trap 'kill $PACKER 2>/dev/null' EXIT

# 2. the bench (part 1)
if [[ $PART == 1 ]] && (( BENCH_ON )); then
  # One command line for both, so that the dry run checks the one the GPU runs; the dry
  # run adds tiny sizes and leaves out compiling, the loop of an old commit and HF's
  # models (tests/test_bench.py times those on the CPU).
  if (( DRY )); then
    BENCH=$OUT/bench-cpu.json; LIMIT=150
    TINY=(--profile "$PROFILE" --loop-steps 4 --bare-steps 3 --no-compile --no-today --no-hf
          --packed-seconds 1)
  else
    BENCH=data/results/bench/gpu-profile-cuda.json; LIMIT=180; TINY=()
  fi
  step bench $LIMIT $PY -m albert_rerun.engine.bench --device "$DEVICE" --repeats 1 \
    --packed "$WORKERS" ${TINY[@]+"${TINY[@]}"} --output "$BENCH"
  (( DRY )) || cp "$BENCH" "$OUT/" 2>/dev/null
fi

# 3. the claims' missing runs, no run started after the deadline
deadline() { local d=$(( $(left) - RESERVE )); (( d < 0 )) && d=0; echo $d; }
step "claims" $(( $(left) - 15 )) $PY -m albert_rerun.studies \
  --profile "$PROFILE" --device "$DEVICE" --workers "$WORKERS" --stages pretrain \
  --seconds "$(deadline)" ${CLAIMS[@]+--claims "${CLAIMS[@]}"}

# 4. pack, and each finished run's tokens/s
kill $PACKER 2>/dev/null
pack
echo "== this call's runs (tokens/s) =="
$PY - "$STORE" "$MARK" <<'EOF'
import json, os, sys
from pathlib import Path
store, mark = Path(sys.argv[1]), os.path.getmtime(sys.argv[2])
for path in sorted((store / "pretrain").glob("*.json")):
    if path.stat().st_mtime > mark:
        m = json.loads(path.read_text())["metrics"]
        print(f"{path.stem}: {m['steps']} steps, {m.get('tokens_per_second', 0):,.0f} tokens/s, "
              f"{m['train_seconds']:.1f} s")
EOF
echo "== packed: $(tar tzf "$OUT/results.tgz" 2>/dev/null | wc -l) JSON results," \
     "$(ls "$OUT"/weights.tar.* 2>/dev/null | wc -l) weight parts; $(left) s left =="
