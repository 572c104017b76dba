#!/usr/bin/env bash
# Set up (if needed) and run the main job: certify the embedded default model (AntiBERTy).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
exec glauber certify --model antiberty --tau 1.0 "$@"
