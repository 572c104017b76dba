#!/usr/bin/env bash
# Regenerate docs/results.md and docs/figures/*.png by running the experiment commands with
# modest budgets (about 15-25 minutes on 2 CPU cores). Reruns resume finished cells; set
# GLAUBER_RESULTS_DIR to keep the raw outputs elsewhere, FRESH=1 to start over.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
OUT=${GLAUBER_RESULTS_DIR:-build/results}
if [ "${FRESH:-0}" = 1 ]; then rm -rf "$OUT"; fi
mkdir -p "$OUT"
: > "$OUT/commands.tsv"
start=$(date +%s)

run() {  # run NAME glauber ARGS...: run a command into $OUT/NAME and record it
    local name=$1; shift
    printf '%s\t%s --out %s/%s\n' "$name" "$*" "$OUT" "$name" >> "$OUT/commands.tsv"
    echo "== $name: $*"
    "$@" --out "$OUT/$name" --no-progress
}

run compare glauber compare \
    --models ising-cycle:n=8,asym-ising:n=8,planted:n=8,antiberty,sapiens-vh,sapiens-vl,tiny-gpt2-control \
    --taus 0.5,1,2 --length 12 --contexts 8 --rectangles 300 --pairs 8 --budget 300
run phase-ising glauber phase-diagram --model ising-cycle:n=8 --taus 0.5,1,1.5,2,4 \
    --lengths 6,8,10 --pairs 16 --budget 5000
run phase-sapiens-vh glauber phase-diagram --model sapiens-vh --taus 0.5,1,2 --lengths 8,16 \
    --pairs 8 --budget 600
run alpha-ising glauber alpha-curve --model ising-cycle:n=8 --taus 0.25,0.5,1,2,4,8
run alpha-asym-ising glauber alpha-curve --model asym-ising:n=8 --taus 0.5,1,2,4,8,16,32
run alpha-antiberty glauber alpha-curve --model antiberty --length 12 --contexts 4 \
    --taus 0.5,1,2,4,8,16,32,64
run trajectory-sapiens-vh glauber trajectory --model sapiens-vh --length 16 --tau 1 \
    --steps 2000 --chains 4 --checkpoint-every 500 --record-every 10 --window 300
run trajectory-ising glauber trajectory --model ising-cycle:n=8 --tau 0.5 --steps 10000 \
    --chains 4 --checkpoint-every 500 --record-every 10 --window 300 --threshold 0.05

# In context: rectangles by window length and exact CDR3 window chains (resumes from the JSON
# committed in docs/data/windows; the score tables are cached under $GLAUBER_CACHE).
echo "== windows: python -m glauber.experiments.windows --out docs/data/windows"
python -m glauber.experiments.windows --out docs/data/windows
# The bracket tau_no_cert < tau_cert on the full chains and the exact CDR3 windows (resumes from
# the JSON committed in docs/data/bracket; the full chains' searches take tens of minutes).
echo "== brackets: python -m glauber.experiments.brackets --out docs/data/bracket"
python -m glauber.experiments.brackets --out docs/data/bracket
python -m glauber.experiments.results_doc "$OUT" --docs docs --seconds $(( $(date +%s) - start )) \
    --windows docs/data/windows --brackets docs/data/bracket
echo "wrote docs/results.md"
