#!/usr/bin/env bash
# One stretch of a long profile's training, resumable across machines and sessions.
#
#   scripts/train_stretch.sh cpu-long 2.5     # profile, hours of budget
#
# Runs `python -m albert_rerun.studies --profile P --hours H --fill` (every stage: runs
# start in the planned order while their predicted time fits; a worker that nothing fits
# starts the next run anyway while 5 minutes are left, since its checkpoint is kept;
# running runs stop at the deadline with a checkpoint), then commits what the stretch left: finished runs with their fp16
# weights, evaluations, choices, the log, and the checkpoints of interrupted runs (a few
# MB each; .gitignore leaves checkpoints out, so they are added by force) so that a fresh
# clone on another machine resumes them. Run the same command again for the next
# stretch: it trains only what is missing. NO_COMMIT=1 leaves the commit to you.
#
#   scripts/train_stretch.sh confirm 1.5      # the pre-registered confirmatory runs
#
# The confirmatory store (book/preregistration.md) trains with
# `python -m albert_rerun.studies.confirm train` from a clean checkout of HEAD (a git
# worktree in a temporary folder; the package imported from it), so that every run
# records a clean commit that descends from the registration, whatever is being edited
# in this tree meanwhile; its results go to this tree's data/results/confirm/.
#
#   scripts/train_stretch.sh long-pilot 2     # the long pilot to 64x (studies.long_pilot)
#   scripts/train_stretch.sh ladder 2         # the compute ladder (book/ladder.md)
#   scripts/train_stretch.sh asymmetry-pilot 2  # the asymmetry study's pilot (issue #54)
#   scripts/train_stretch.sh asymmetry 2        # the asymmetry study (book/asymmetry_registration.md)
#
# trains the same way, from a clean checkout, into data/results/long-pilot/.
set -euo pipefail
profile=${1:?usage: scripts/train_stretch.sh PROFILE HOURS}
hours=${2:?usage: scripts/train_stretch.sh PROFILE HOURS}
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
case $python in /*) ;; */*) python="$PWD/$python" ;; esac
if ! [ -x "$python" ] && ! command -v "$python" >/dev/null; then
  echo "no Python at $python: run \`make venv\` first (or set PYTHON)" >&2; exit 2
fi
store=data/results/$profile
mkdir -p "$store/logs"
log="$store/logs/stretch-$(date -u +%Y%m%dT%H%M%SZ).log"
echo "stretch of $profile, budget $hours h, log $log"
case $profile in
  confirm) module=albert_rerun.studies.confirm ;;
  long-pilot) module=albert_rerun.studies.long_pilot ;;
  ladder) module=albert_rerun.studies.ladder ;;
  asymmetry-pilot) module=albert_rerun.studies.asymmetry_pilot ;;
  asymmetry) module=albert_rerun.studies.asymmetry ;;
  *) module= ;;
esac
if [ -n "$module" ]; then
  here=$(pwd)
  tree=$(mktemp -d "${TMPDIR:-/tmp}/albert-confirm-XXXXXX")
  git worktree add --detach "$tree" HEAD >/dev/null
  trap 'git worktree remove --force "$tree"' EXIT
  mkdir -p "$here/data/cache"  # the token caches, shared with this tree (built on first use)
  ln -s "$here/data/cache" "$tree/data/cache" 2>/dev/null || true
  echo "training from a clean checkout of $(git rev-parse --short HEAD) in $tree"
  (cd "$tree" && PYTHONPATH="$tree/src" ALBERT_RERUN_RESULTS="$here/data/results" \
     "$python" -m "$module" train --hours "$hours" --fill) \
     2>&1 | tee "$log"
else
  "$python" -m albert_rerun.studies --profile "$profile" --hours "$hours" --fill 2>&1 | tee "$log"
fi
if [ "${NO_COMMIT:-0}" = 1 ]; then exit 0; fi
git add "$store"
if [ -d "$store/checkpoints" ]; then git add -f "$store/checkpoints"; fi
git add -u "$store"  # checkpoints of runs that finished since the last stretch are gone
finished=$(grep -c '^\[\(pretrain\|confirm\|long-pilot\|asymmetry-pilot\|asymmetry\|ladder [0-9]*x\)\] [0-9a-f]\{16\} {' "$log" || true)
stopped=$(grep -c 'stopped at the deadline' "$log" || true)
git commit -m "$profile: a stretch of $hours h: $finished runs finished, $stopped stopped at \
the deadline with checkpoints (log: $log)" -- "$store" || echo "nothing new to commit"
