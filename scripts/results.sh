#!/usr/bin/env bash
# Regenerate docs/results.md and docs/figures/*.png: rerun every section's experiments (modest
# budgets, about 20-30 minutes on 2 CPU cores) and render the page from docs/data/. Reruns resume
# finished cells; set GLAUBER_RESULTS_DIR to keep the runs' full outputs elsewhere (default
# build/results), FRESH=1 to start over. `glauber results` alone re-renders from the committed
# data in a second; `glauber results --rerun SECTION` reruns one section.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
OUT=${GLAUBER_RESULTS_DIR:-build/results}
if [ "${FRESH:-0}" = 1 ]; then rm -rf "$OUT"; fi
glauber results --rerun all --work "$OUT"
