#!/usr/bin/env bash
# Set up (if needed) and run the main job on the embedded default model (AntiBERTy), in context:
#   1. the exact chain of a 3-site window in the CDR3 loop of the full trastuzumab heavy chain
#      (positions 98-100 (RWG), every other residue frozen; 20^3 = 8,000 states): exact t_mix, gap,
#      exact C and alpha, every rectangle, traps;
#   2. the full trastuzumab heavy chain (120 residues) in its own context: rectangles on the full
#      chain and the influence searched from it (every entry realised by a witness; `glauber
#      recheck` rechecks): the default search budget, 2,000 rows; then its bracket, printed: the
#      highest temperature where no Theorem 5 certificate can exist (the search's witnesses) and
#      the lowest where one is proved (the head's weights bound every influence from above);
#   3. the other three shipped chains, influence (a 400-row search from the first two states)
#      and traps (margins, Theorem 8) on each: the pertuzumab heavy chain with two single-site
#      CDR-H3 variants, and both light chains with one single-site CDR-L3 variant each
#      (scripts/main-states/): with step 2, 8 distinct states of the four chains.
# 261 s in all on 2 cores with an empty GLAUBER_CACHE and the venv set up (2026-12-05; see the
# README): the window 54 s, the full chain 108 s, the other chains 35 s each, the page seconds.
# Certificates go to results/main/ as JSON, and one HTML page of all four (glauber report) beside
# them. Extra arguments are passed to every certify call.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
# Two cores: two BLAS/torch threads in the one process that runs at a time.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2} MKL_NUM_THREADS=${MKL_NUM_THREADS:-2}
mkdir -p results/main
echo "glauber main job: AntiBERTy at tau = 1 on trastuzumab VH, the CDR3 window 98-100 (RWG), the"
echo "full chain, then the other three shipped chains; files in results/main/: cdr3-window.json,"
echo "full-chain.json, pertuzumab-vh.json, light-chains.json, report.html"
glauber certify --model antiberty --context trastuzumab-vh --sites 98-100 --tau 1.0 --pairs 0 \
    --json results/main/cdr3-window.json "$@"
echo
glauber certify --model antiberty --context trastuzumab-vh --tau 1.0 --pairs 0 \
    --json results/main/full-chain.json "$@"
echo
python - results/main/full-chain.json <<'EOF'
import json, sys
b = json.load(open(sys.argv[1])).get("bracket")
if b:  # absent with --no-bracket
    f = lambda v: "none found" if v is None else f"{v:.4g}"
    print(f"full chain: no Theorem 5 certificate can exist at tau = {f(b['tau_no_cert'])} "
          f"({b['lower_method']}); one is proved from tau = {f(b['tau_cert'])} "
          f"({b['upper_method']}); ratio tau_cert / tau_no_cert = {f(b['ratio'])}")
EOF
echo
glauber certify --model antiberty --context pertuzumab-vh --tau 1.0 --pairs 0 --rectangles 10 \
    --search-budget 400 --states scripts/main-states/pertuzumab-vh.txt \
    --json results/main/pertuzumab-vh.json "$@"
echo
glauber certify --model antiberty --context trastuzumab-vl --tau 1.0 --pairs 0 --rectangles 10 \
    --search-budget 400 --states scripts/main-states/light-chains.txt \
    --json results/main/light-chains.json "$@"
echo
# One page with the four certificates (figures embedded); its path is the last line printed.
glauber report results/main/cdr3-window.json results/main/full-chain.json \
    results/main/pertuzumab-vh.json results/main/light-chains.json --out results/main/report.html
