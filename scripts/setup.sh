#!/usr/bin/env bash
# Create .venv and install glauber with its test extra on a fresh machine.
# torch is pinned to the CPU build that lies on this machine's disk; pyproject.toml accepts a range
# so GPU users keep their own build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.glauber-setup
want=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    python -m pip install -q --upgrade pip
    python -m pip install -q "torch==2.13.0"
    # sceptr: SCEPTR's weights (10.9 MB; glauber reads only config.json and state_dict.pt) and
    # libtcrlm, for the test that checks glauber's plain-torch network against the package's own
    # (it adds pandas 2.x, tidytcells, blosum and pytz; numpy stays as it is)
    python -m pip install -q -e ".[test,antiberty,diagnostics,ray,sceptr]"
    # The reaction SMILES masked LMs (tests/mlm_backend/test_reactions.py): only their weights
    # are read, and their pins (rxnfp: scipy==1.4.1; rxnmapper: transformers<5) conflict with
    # this environment, so they are installed without their dependencies (no pip extra can say
    # --no-deps; pyproject.toml).
    python -m pip install -q --no-deps rxnmapper==0.4.3 rxnfp==0.1.0
    echo "$want" > "$stamp"
fi
