"""The main job's states (scripts/main.sh, scripts/main-states/): all four shipped chains, 8 or
more distinct states, every variant one residue away from a shipped chain of its type.

Oracle: the shipped sequences (glauber.mlm_backend.sequences) and the shell script's own text.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

ROOT = Path(__file__).resolve().parents[1]


def certify_calls() -> list[dict[str, str]]:
    """The options of every ``glauber certify`` call in scripts/main.sh."""
    text = (ROOT / "scripts" / "main.sh").read_text().replace("\\\n", " ")
    calls = []
    for line in text.splitlines():
        if line.startswith("glauber certify"):
            words = shlex.split(line)[2:]
            calls.append({words[k]: words[k + 1] for k in range(len(words) - 1)
                          if words[k].startswith("--") and not words[k + 1].startswith("--")})
    return calls


def states_of(call: dict[str, str]) -> list[str]:
    """The states a call examines: its --states file, else its context chain itself."""
    if "--states" in call:
        lines = (ROOT / call["--states"]).read_text().splitlines()
        return [s.strip() for s in lines if s.strip() and not s.startswith("#")]
    return [ANTIBODY_SEQUENCES[call["--context"].replace("-", "_")]]


def test_the_main_job_examines_every_shipped_chain_and_eight_states():
    calls = [c for c in certify_calls() if "--sites" not in c]  # the exact window aside
    examined = {s for call in calls for s in states_of(call)}
    assert set(ANTIBODY_SEQUENCES.values()) <= examined
    assert len(examined) >= 8
    for call in calls:
        context = ANTIBODY_SEQUENCES[call["--context"].replace("-", "_")]
        for state in states_of(call):
            assert len(state) == len(context)  # a state of the context's model
            nearest = min(sum(a != b for a, b in zip(state, chain))
                          for chain in ANTIBODY_SEQUENCES.values() if len(chain) == len(state))
            assert nearest <= 1  # a shipped chain or a single-site variant of one
        assert call["--tau"] == "1.0" and "--json" in call


def test_the_variants_are_the_ones_the_files_describe():
    # pertuzumab VH with trastuzumab's CDR-H3 residues at 99 and 100; each VL with the other's
    # residue at 91 (1-based positions, as the files' comments say).
    pv, tv = ANTIBODY_SEQUENCES["pertuzumab_vh"], ANTIBODY_SEQUENCES["trastuzumab_vh"]
    tl, pl = ANTIBODY_SEQUENCES["trastuzumab_vl"], ANTIBODY_SEQUENCES["pertuzumab_vl"]
    files = {c["--states"]: states_of(c) for c in certify_calls() if "--states" in c}
    vh = files["scripts/main-states/pertuzumab-vh.txt"]
    assert vh[1][98] == tv[98] == "W" and vh[2][99] == tv[99] == "G"
    vl = files["scripts/main-states/light-chains.txt"]
    assert vl[:2] == [tl, pl] and vl[2][90] == pl[90] == "Y" and vl[3][90] == tl[90] == "H"
    assert re.search(r"N99W, L100G", (ROOT / "scripts/main-states/pertuzumab-vh.txt").read_text())
