#!/usr/bin/env bash
# Regenerate docs/results.md and docs/figures/*.png: rerun every section's experiments and render
# the page from docs/data/. Reruns resume finished cells (those in docs/data/ and in the work
# folder); from empty folders the whole page takes about 2.5 hours on 2 CPU cores (measured
# 2026-12-04, two sections at a time: kernels 39 min, windows 30, the bracket's searches 28, the
# runs 27, convergence 10, the dichotomy 9, joints 2).
# Set GLAUBER_RESULTS_DIR to keep the runs' full outputs elsewhere (default
# build/results), FRESH=1 to start over. `glauber results` alone re-renders from the committed
# data in a second; `glauber results --rerun SECTION` reruns one section.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
OUT=${GLAUBER_RESULTS_DIR:-build/results}
if [ "${FRESH:-0}" = 1 ]; then rm -rf "$OUT"; fi
glauber results --rerun all --work "$OUT"
