#!/usr/bin/env bash
# Set up (if needed) and run the main job on the embedded default model (AntiBERTy), in context:
#   1. the exact chain of a 3-site window in the CDR3 loop of the full trastuzumab heavy chain
#      (positions 98-100 (RWG), every other residue frozen; 20^3 = 8,000 states): exact t_mix, gap,
#      exact C and alpha, every rectangle, traps;
#   2. the full chain (120 residues) in its own context: rectangles on the full chain and the
#      influence searched from it (every entry realised by a witness; `glauber recheck` rechecks):
#      the default search budget, 2,000 rows, a principal block of 42 high-entropy residues
#      (107 s on 2 cores; the whole job 178-204 s, measured 2026-12-03, and a few seconds more for
#      the report page).
# Certificates go to results/main/ as JSON, and one HTML page of both (glauber report) beside
# them. Extra arguments are passed to both certify calls.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
# Two cores: one BLAS/torch thread per process (as scripts/test.sh sets them).
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2} MKL_NUM_THREADS=${MKL_NUM_THREADS:-2}
mkdir -p results/main
echo "glauber main job: AntiBERTy at tau = 1 on trastuzumab VH, the CDR3 window 98-100 (RWG), then"
echo "the full chain; files: results/main/cdr3-window.json, full-chain.json, report.html"
glauber certify --model antiberty --context trastuzumab-vh --sites 98-100 --tau 1.0 --pairs 0 \
    --json results/main/cdr3-window.json "$@"
echo
glauber certify --model antiberty --context trastuzumab-vh --tau 1.0 --pairs 0 \
    --json results/main/full-chain.json "$@"
echo
# One page with both certificates (figures embedded); its path is the last line printed.
glauber report results/main/cdr3-window.json results/main/full-chain.json \
    --out results/main/report.html
