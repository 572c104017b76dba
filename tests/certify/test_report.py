"""``glauber report``: one self-contained HTML page of certificates, and its bad input.

Oracles: the certificate's own numbers (the page must show the exact t_mix, the searched C's
size, the bracket it holds), the structure of a self-contained page (every image a data URI,
no script, no link to the network), and a real browser (headless Chromium from Debian's
packages, installed by scripts/test.sh where apt is available): the page loads, every image
decodes, and a screenshot is not blank.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from glauber.certify import certify
from glauber.certify.report import read_certificate, report_html, write_report
from glauber.cli import main
from glauber.errors import InvalidParameterError
from glauber.models import resolve_model
from glauber.toy_models import IsingModel

DATA = Path(__file__).parent / "data"
WINDOW = DATA / "cdr3-window.json"  # the main job's exact CDR3 window (AntiBERTy, tau = 1)


class _Page(HTMLParser):
    """The tags of a page: images, scripts, links and every URL an attribute holds."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):  # noqa: D401
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "data", "action") and value:
                self.urls.append(value)
        if tag == "img":
            self.images.append(dict(attrs)["src"])


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def toy_json(tmp_path_factory) -> Path:
    cert = certify(IsingModel(nx.cycle_graph(6)), 1.0, n_rectangles=20, budget=5, n_pairs=1,
                   lag=10, lag_pairs=30)
    path = tmp_path_factory.mktemp("toy") / "toy.json"
    path.write_text(cert.to_json())
    return path


@pytest.fixture(scope="module")
def searched_json(tmp_path_factory) -> Path:
    """A full chain with searched influences and a bracket extended by hand (the shape of
    issue 20's ``"bracket"``: both thresholds, the grid and the upper-bound matrix)."""
    cert = certify(resolve_model("curie-weiss:n=8,alpha=3"), 1.0, exhaustive=False, exact=False,
                   n_rectangles=20, budget=5, n_pairs=0, search_budget=300)
    data = json.loads(cert.to_json())
    grid = [0.5, 1.0, 2.0, 4.0, 8.0]
    data["bracket"] = {"tau_cert": 6.0, "tau_no_cert": 1.0, "grid": grid,
                       "rho_upper": [8.0, 4.0, 2.0, 1.0, 0.5],
                       "rho_lower": [3.0, 2.5, None, None, None],
                       "upper_method": "closed-form", "lower_method": "search witnesses",
                       "upper_C": (np.asarray(cert.influence.C) * 1.5).tolist()}
    path = tmp_path_factory.mktemp("searched") / "searched.json"
    path.write_text(json.dumps(data))
    return path


def test_page_is_self_contained_and_shows_every_part(toy_json, searched_json):
    html = report_html([(read_certificate(p), str(p)) for p in (WINDOW, toy_json,
                                                                 searched_json)])
    page = _parse(html)
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    assert page.urls and all(u.startswith("data:image/png;base64,") for u in page.urls)
    window = json.loads(WINDOW.read_text())
    assert f"t_mix(0.25) = {window['exact']['tmix']} steps" in html  # the verdict, first
    for title in ("verdict", "influence matrix", "alpha curve and bracket", "traps and margins",
                  "stationary law and t_mix", "rectangle statistic", "provenance",
                  "convergence from the start states"):
        assert html.count(f"<h3>{title}") == 3
    assert "tau_no_cert = 1, tau_cert = 6 (ratio 6)" in html  # the hand-made bracket
    assert "upper bound on C (closed-form)" in html  # drawn beside the searched C
    assert "positions resampled (1-based)</th><td>98-100" in html  # from the model's name
    toy = json.loads(toy_json.read_text())["lag_coupling"]
    held = "held" if toy["exact_tv"] <= toy["bound"]["upper"][toy["step"]] else "FAILED"
    assert f"at step {toy['step']:,} (95% CI" in html and f"(the estimate {held})" in html
    assert "run certify with --lag-coupling L" in html  # the searched chain ran no pairs
    # 6 figures for the toy (the lag-coupling curve among them); 4 for the window (it
    # predates the top-states list and ran no lag coupling) and for the searched chain (no
    # exact chain, so no stationary law)
    assert len(page.images) == 14


def test_missing_sections_are_named_and_the_rest_renders(toy_json, tmp_path):
    data = json.loads(toy_json.read_text())
    for key in ("influence", "exact", "versions"):
        del data[key]
    data["incompatibility"]["rectangles"] = "not a table"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    html = report_html([(read_certificate(path), str(path))])
    assert "missing from this certificate: influence, exact, versions" in html
    assert "the verdict needs a certificate this version can read" in html
    assert html.count('class="missing"') >= 4  # the page says what it lacks, section by section
    assert "<h3>provenance</h3>\n<table>" in html and "traps and margins" in html


@pytest.mark.parametrize("content, words", [
    ("", "is not JSON"),
    ("[1, 2]", "is not a glauber certificate"),
    ('{"model": "x"}', "is not a glauber certificate"),
    ("\x00\xff", "is not"),
])
def test_a_file_that_is_not_a_certificate_is_one_line_and_exit_2(tmp_path, capsys, content,
                                                                  words):
    path = tmp_path / "bad.json"
    path.write_bytes(content.encode("latin-1"))
    assert main(["report", str(path), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("glauber report: error: ") and words in err and "\n" not in err
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(InvalidParameterError):
        read_certificate(path)


def test_missing_file_and_folder_are_one_line(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r.html")]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_command_writes_beside_the_json_and_prints_the_path_last(toy_json, tmp_path, capsys):
    cert = tmp_path / "c.json"
    cert.write_text(toy_json.read_text())
    assert main(["report", str(cert)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"report: {tmp_path / 'c.html'} (")
    assert (tmp_path / "c.html").stat().st_size < 3e6


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


#: Flags that keep headless Chromium off the network (else it hangs trying it).
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars")
#: A probe appended to a copy of the page (the report itself has no script): after load, it
#: writes how many images decoded into the body, which --dump-dom then prints.
PROBE = ("<script>window.addEventListener('load', () => { const i = [...document.images]; "
         "document.body.setAttribute('data-loaded', i.filter(x => x.complete && "
         "x.naturalWidth > 0).length + '/' + i.length); });</script>")


@pytest.mark.skipif(_chromium() is None,
                    reason="headless Chromium is not installed (scripts/test.sh installs "
                           "Debian's chromium where apt-get is available)")
def test_page_renders_in_headless_chromium(toy_json, searched_json, tmp_path):
    page = write_report([WINDOW, toy_json, searched_json], tmp_path / "report.html")
    base = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "shot.png"
    subprocess.run([*base, f"--screenshot={shot}", "--window-size=1200,2400",
                    page.as_uri()], check=True, capture_output=True, timeout=120)
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    assert pixels.shape[0] == 2400 and pixels.shape[1] == 1200
    assert (pixels.min(axis=2) < 0.9).mean() > 0.02  # ink: text and figures, not a blank page
    assert pixels.std() > 0.05
    probed = tmp_path / "probed.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom = subprocess.run([*base, "--dump-dom", "--virtual-time-budget=5000", probed.as_uri()],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    loaded = re.search(r'data-loaded="(\d+)/(\d+)"', dom)
    assert loaded is not None, dom[:300]
    assert loaded.group(1) == loaded.group(2) == str(len(_parse(page.read_text()).images))
