#!/usr/bin/env bash
# Train a profile's claim runs on a lent machine, many side by side, as one prepared
# call (the device time is short and cannot be extended):
#   python -m albert_rerun.claims --profile PROFILE --workers WORKERS --claims CLAIM...
# The step-time calibration and the throughput table must already be stored for the
# profile (measured on the machine the profile is sized for): the script stops if they
# are not, rather than measure them here. No run starts after SECONDS minus RESERVE
# (default 290 s, about one run side by side), so that every run started ends in time.
# Finished results are packed into OUT/results.tgz every 30 s, so a call cut short still
# returns what finished. Usage:
#   bash scripts/device_claims.sh OUT SECONDS PROFILE WORKERS CLAIM...
set -uo pipefail
usage="usage: device_claims.sh OUT SECONDS PROFILE WORKERS CLAIM..."
OUT=${1:?$usage}; BUDGET=${2:?$usage}; PROFILE=${3:?$usage}; WORKERS=${4:?$usage}
shift 4
(( $# )) || { echo "$usage" >&2; exit 2; }
RESERVE=${RESERVE:-290}
PY=${PYTHON:-python3}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
STORE=$($PY -c "from albert_rerun.results import results_dir; print(results_dir(\"$PROFILE\"))") || exit 2
mkdir -p "$OUT" "$STORE"
MARK=$(mktemp)

# the records train_all reads for this profile's current sizes (claims.calibration_path,
# claims.throughput_path), not merely any stored one
for kind in calibration throughput; do
  if ! $PY -c "import sys; from albert_rerun import claims; sys.exit(not claims.${kind}_path('$PROFILE').exists())"; then
    echo "no stored $kind for profile $PROFILE: measure it on the machine the profile" \
         "is sized for and commit it first" >&2
    exit 2
  fi
done
pack() {  # this call's run results, never checkpoints or measurements
  find "$STORE" -maxdepth 1 -name '*.json' ! -name 'calibration-*' ! -name 'throughput-*' \
    -newer "$MARK" -print0 | tar czf "$OUT/results.partial.tgz" --null -T - 2>/dev/null \
    && mv "$OUT/results.partial.tgz" "$OUT/results.tgz"
}

echo "== machine =="
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true
$PY -c "import torch, transformers, numpy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'transformers', transformers.__version__, 'numpy', numpy.__version__)"
echo "cores: $(nproc)"
before=$(ls "$STORE"/calibration-*.json "$STORE"/throughput-*.json | sort)

( while sleep 30; do pack; done ) & PACKER=$!
started=$(date +%s)
timeout --kill-after=5 $(( BUDGET - 10 )) $PY -m albert_rerun.claims --profile "$PROFILE" \
  --workers "$WORKERS" --seconds $(( BUDGET - RESERVE )) --claims "$@"
echo "== claims: exit $? after $(( $(date +%s) - started )) s =="
kill $PACKER 2>/dev/null
pack
after=$(ls "$STORE"/calibration-*.json "$STORE"/throughput-*.json | sort)
[[ "$before" == "$after" ]] || echo "warning: a measurement was taken on this machine" \
  "(not packed): $(comm -13 <(echo "$before") <(echo "$after"))"
echo "== packed: $(tar tzf "$OUT/results.tgz" 2>/dev/null | wc -l) results =="
