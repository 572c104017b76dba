"""docs/results.md is generated: ``glauber results`` renders it, every section, from docs/data/.

Oracle: the committed page. Rendering it again from the committed data must give it byte for
byte (the timings are data too, so nothing needs masking); ``scripts/results.sh`` reruns the
experiments into the same data and renders with the same functions.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

import glauber.cli
from glauber.errors import InvalidParameterError
from glauber.experiments import results, tau_no_cert

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_committed_page_is_rendered_from_the_committed_data():
    page = (DOCS / "results.md").read_text(encoding="utf-8")
    assert results.render_page(DOCS) == page


def test_glauber_results_writes_the_page_from_a_copy_of_the_data(tmp_path):
    shutil.copytree(DOCS / "data", tmp_path / "data")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert glauber.cli.main(["results", "--docs", str(tmp_path)]) == 0
    assert (tmp_path / "results.md").read_bytes() == (DOCS / "results.md").read_bytes()
    with contextlib.redirect_stdout(out):
        assert glauber.cli.main(["results", "--docs", str(tmp_path), "--list"]) == 0
    for s in results.SECTIONS:
        assert s.name in out.getvalue() and s.command in out.getvalue()


def test_every_section_has_its_heading_and_its_data():
    page = (DOCS / "results.md").read_text(encoding="utf-8")
    names = [s.name for s in results.SECTIONS]
    assert len(set(names)) == len(names)
    for s in results.SECTIONS:
        assert f"\n## {s.title}\n" in page and (DOCS / "data" / s.data).is_dir()
        assert s.refresh is not None or any(o.refresh and o.data == s.data
                                            for o in results.SECTIONS)
    assert page.index("## In context") < page.index("## Where no Theorem 5") < page.index(
        "## Findings") < page.index("## Runs")


def test_rerun_names_a_section(tmp_path):
    log = []
    with pytest.raises(InvalidParameterError, match="choose from windows, kernels, tau_no_cert"):
        results.refresh(["nonsense"], tmp_path, tmp_path, log.append)
    with pytest.raises(InvalidParameterError, match="glauber results --rerun runs"):
        results.refresh(["findings"], tmp_path, tmp_path, log.append)
    assert not log  # nothing ran


def test_tau_no_cert_refresh_replaces_the_computed_columns_only():
    data = json.loads((DOCS / "data" / "tau_no_cert" / "section.json").read_text())
    (table,) = [b for b in data["blocks"] if b.get("table") == "exact_window"]
    header, rows = table["header"], table["rows"]
    col = {h: k for k, h in enumerate(header)}
    # an alpha curve whose values are the table's own: only the number formats may change
    fresh = {"rows": [{"tau": float(r[0]),
                       "spectral_radius": float(r[col["exact rho(C)"]]),
                       "search_spectral_radius": float(r[col["searched rho(C)"]]) + 1.0,
                       "alpha_row": float(r[col["exact alpha_row"]]),
                       "tmix_matrix_power": "inf" if r[col["Theorem 5 bound (matrix power)"]]
                       == "none" else int(r[col["Theorem 5 bound (matrix power)"]]),
                       "exact_tmix": int(r[col["exact t_mix(1/4)"]])} for r in rows]}
    new = tau_no_cert.exact_window_rows(fresh, rows, header)
    for old, row in zip(rows, new):
        searched = col["searched rho(C)"]
        assert float(row[searched]) == pytest.approx(float(old[searched]) + 1.0, abs=5e-3)
        assert [c for k, c in enumerate(row) if k != searched] == [
            c for k, c in enumerate(old) if k != searched]
    with pytest.raises(InvalidParameterError, match="no temperature 0.25"):
        tau_no_cert.exact_window_rows({"rows": fresh["rows"][1:]}, rows, header)


def test_tau_no_cert_refresh_runs_its_command_and_rewrites_its_table(tmp_path, monkeypatch):
    folder = tmp_path / "tau_no_cert"
    shutil.copytree(DOCS / "data" / "tau_no_cert", folder)
    before = tau_no_cert.render(folder)
    ran = []

    def fake_run(argv, check):  # the alpha curve, answered with t_mix = 1000 at every tau
        ran.append(argv)
        out = Path(argv[argv.index("--out") + 1])
        out.mkdir(parents=True)
        rows = [{"tau": t, "spectral_radius": 0.5, "search_spectral_radius": 0.25,
                 "alpha_row": 0.75, "tmix_matrix_power": 12, "exact_tmix": 1000}
                for t in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)]
        (out / "alpha_curve.json").write_text(json.dumps({"rows": rows}))

    monkeypatch.setattr(tau_no_cert.subprocess, "run", fake_run)
    tau_no_cert.refresh(folder, tmp_path / "work", lambda message: None)
    assert ran and ran[0][-len(tau_no_cert.COMMAND) - 3:-3] == list(tau_no_cert.COMMAND)
    after = tau_no_cert.render(folder)
    assert "| 0.25 | 0.5 | 0.25 | 1.84 | 0.75 | 12 | 1000 |" in after  # the recorded column kept
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert len(changed) == 7 and all(line.endswith("| 12 | 1000 |") for line in changed)
