#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
# The browser test of `glauber report` needs headless Chromium: Debian's package, installed once
# where apt-get is available and we are root; elsewhere that test is skipped, saying why.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
        && [ "$(id -u)" = 0 ]; then
    { apt-get install -y -q --no-install-recommends chromium \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends chromium; }; } \
        >/dev/null 2>&1 || echo "test.sh: chromium not installed; the browser test will be skipped"
fi
# Two xdist workers on two cores: one BLAS/torch thread each avoids oversubscription.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
exec python -m pytest -n 2 -q "$@"
