#!/usr/bin/env bash
# Regenerate docs/results.md and docs/figures/*.png: rerun every section's experiments and render
# the page from docs/data/. Reruns resume finished cells (those in docs/data/ and in the work
# folder); from empty folders the whole page takes about 5-6 hours on 2 CPU cores (the bracket's
# four full-chain searches about 1.5 h, the dichotomy about 70 min, the windows about an hour).
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
