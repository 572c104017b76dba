"""The section of docs/results.md on where no Theorem 5 certificate can exist (``tau_no_cert``).

The section is data: ``docs/data/tau_no_cert/section.json`` holds its blocks in order, each a
paragraph (``{"text": ...}``), a command (``{"code": ...}``) or a table (``{"table": name,
"header": [...], "rows": [[...], ...]}``, cells as printed), and :func:`render` writes the
Markdown. Most of it records runs made by hand with the commands it shows (some with earlier
versions of the influence search, kept for comparison), on budgets too long for
``scripts/results.sh`` (up to 35 minutes each); those blocks are kept as recorded. One table is
recomputed by :func:`refresh`: ``exact_window``, the exact CDR3 window against the search, whose
columns come from :data:`COMMAND` (an alpha curve with a search beside the exact chain, about
3 minutes): exact and searched rho(C), exact alpha_row, the matrix-power bound and the exact
t_mix at each temperature. The column "searched, before the block scan" records the earlier
search and is kept.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from glauber.core.io import write_json_atomic
from glauber.errors import InvalidParameterError
from glauber.experiments.common import markdown_table

#: The data file of the section (in its folder under docs/data/).
DATA = "section.json"
#: The alpha curve whose results fill the ``exact_window`` table (``--out`` added).
COMMAND = ("alpha-curve", "--model", "antiberty", "--context", "trastuzumab-vh", "--sites",
           "98-100", "--taus", "0.25,0.5,1,2,4,8,16", "--search-budget", "2000")
#: Columns of the ``exact_window`` table that :func:`refresh` recomputes, with the key of an
#: alpha-curve row each comes from.
REFRESHED = {"exact rho(C)": "spectral_radius", "searched rho(C)": "search_spectral_radius",
             "exact alpha_row": "alpha_row",
             "Theorem 5 bound (matrix power)": "tmix_matrix_power",
             "exact t_mix(1/4)": "exact_tmix"}


def render(folder: Path) -> str:
    """The Markdown of the section (below its heading) from ``folder/section.json``."""
    data = json.loads((folder / DATA).read_text(encoding="utf-8"))
    parts = []
    for block in data["blocks"]:
        if "table" in block:
            parts.append(markdown_table(block["header"], block["rows"]))
        elif "code" in block:
            parts.append(f"```\n{block['code']}\n```\n")
        else:
            parts.append(block["text"] + "\n")
    return "\n".join(parts)


def _cell(key: str, value: Any) -> str:
    if value is None or (key == "tmix_matrix_power" and not math.isfinite(float(value))):
        return "none"
    if key in ("tmix_matrix_power", "exact_tmix"):
        return f"{math.ceil(float(value)):d}"
    return f"{float(value):.3g}"


def exact_window_rows(result: dict, rows: list[list[str]], header: list[str]) -> list[list[str]]:
    """``rows`` of the ``exact_window`` table with the :data:`REFRESHED` columns replaced from an
    alpha-curve ``result`` (matched by temperature; the other columns kept)."""
    by_tau = {f"{r['tau']:g}": r for r in result["rows"]}
    out = []
    for row in rows:
        fresh = by_tau.get(row[0])
        if fresh is None:
            raise InvalidParameterError(
                f"the alpha curve has no temperature {row[0]}; rerun it with the table's grid")
        out.append([_cell(REFRESHED[h], fresh[REFRESHED[h]]) if h in REFRESHED else cell
                    for h, cell in zip(header, row)])
    return out


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Rerun :data:`COMMAND` into ``work/tau-no-cert-window`` and update the ``exact_window``
    table of ``folder/section.json`` from its ``alpha_curve.json``."""
    out = work / "tau-no-cert-window"
    argv = [*COMMAND, "--out", str(out), "--no-progress"]
    log("glauber " + " ".join(argv))
    subprocess.run([sys.executable, "-m", "glauber.cli", *argv], check=True)
    result = json.loads((out / "alpha_curve.json").read_text(encoding="utf-8"))
    data = json.loads((folder / DATA).read_text(encoding="utf-8"))
    for block in data["blocks"]:
        if block.get("table") == "exact_window":
            block["rows"] = exact_window_rows(result, block["rows"], block["header"])
    write_json_atomic(folder / DATA, data)


__all__ = ["COMMAND", "DATA", "REFRESHED", "exact_window_rows", "refresh", "render"]
