"""One site numbering: every window label in the docs means what the command line means by it.

A label such as ``trastuzumab VH 100–102 (GGD)`` or ``residues 98–100 (RWG)`` names positions
of a shipped chain and the residues standing there (``sceptr-example 50–52 (QGD)``: positions
of SCEPTR's example TCR, counted over its residues loop after loop, as ``--sites`` counts them).
The oracle is the command line itself: the label's range goes through
``glauber certify --context CHAIN --sites A-B`` (the CLI's own parser, then
:func:`glauber.models.window_spec` and :func:`glauber.models.parse_sites`, which count from 1)
and must select exactly the residues the label names. Before issue 24 the generated results
table counted from 0 (``99–101 (GGD)``), so the same label selected ``WGG`` on the command
line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glauber.cli import build_parser
from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES, TCR_SEQUENCES
from glauber.models import parse_sites, split_window_spec, window_spec

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks/README.md",
        ROOT / "scripts/main.sh"]
#: A range of positions followed by the residues it names: ``100–102 (GGD)``, ``100-102 (`GGD```.
LABEL = re.compile(r"(\d+)\s*[–-]\s*(\d+)\s*\(`?([A-Z]{2,})`?[ ),]")
#: A shipped chain named in prose or as a context (an antibody chain, or the TCR).
CHAIN = re.compile(r"(trastuzumab|pertuzumab)[ _-](VH|VL|vh|vl|heavy|light)|(sceptr-example)")
KIND = {"vh": "vh", "vl": "vl", "heavy": "vh", "light": "vl"}


def _labels() -> list[tuple[str, int, str, str, str]]:
    """``(file, line, chain, range, residues)`` of every window label in the docs."""
    found = []
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            for m in LABEL.finditer(line):
                context = " ".join(lines[max(0, k - 3):k]) + " " + line[:m.start()]
                chains = CHAIN.findall(context)
                if not chains:
                    continue  # a range of something else (a year, a tau grid)
                name, kind, tcr = chains[-1]
                found.append((path.name, k + 1, tcr or f"{name}-{KIND[kind.lower()]}",
                              f"{m.group(1)}-{m.group(2)}", m.group(3)))
    return found


def _cli_residues(chain: str, sites: str) -> str:
    """The residues ``glauber certify --context CHAIN --sites SITES`` resamples."""
    args = build_parser().parse_args(["certify", "--context", chain, "--sites", sites])
    _, context, parsed = split_window_spec(window_spec(args.model, args.context, args.sites))
    key = context.replace("-", "_")
    seq = ANTIBODY_SEQUENCES[key] if key in ANTIBODY_SEQUENCES else (
        TCR_SEQUENCES[key].replace("/", ""))  # the TCR's residues, loop after loop
    return "".join(seq[k] for k in parse_sites(parsed, len(seq)))


def test_the_docs_hold_window_labels_to_check():
    labels = _labels()
    files = {f for f, *_ in labels}
    assert len(labels) >= 20 and {"README.md", "results.md", "performance.md"} <= files, labels


@pytest.mark.parametrize("where, line, chain, sites, residues", _labels())
def test_every_doc_window_label_resolves_through_the_cli_to_its_residues(
        where, line, chain, sites, residues):
    assert _cli_residues(chain, sites) == residues, f"{where}:{line}: {chain} {sites}"


def test_the_old_zero_based_label_would_fail():
    """The check can fail: the 0-based label of GGD selects WGG on the command line."""
    assert _cli_residues("trastuzumab-vh", "99-101") == "WGG"
    assert _cli_residues("trastuzumab-vh", "100-102") == "GGD"


def test_a_tcr_label_counts_the_residues_of_every_loop():
    """Positions of the TCR run over its six loops: 50-52 is the CDR3B's QGD, not the text's."""
    assert _cli_residues("sceptr-example", "50-52") == "QGD"
    assert _cli_residues("sceptr-example", "44-47") == "CASS"  # the CDR3B's first residues
