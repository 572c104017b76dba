"""Every Python block of docs/testing.md runs: in order, in one namespace, as the page shows.

Blocks are compiled under the page's own file name with their line numbers, and the page's
Python lines are registered in ``linecache`` (markdown lines blanked), as a notebook registers
its cells: that is how ``inspect`` finds the source of the functions defined on the page, so
their reproducers can copy it. A block whose first line is ``# test_<name>.py`` is a pytest file:
it is written out and run by pytest in a subprocess, so the ``assert_bound`` fixture comes from
the installed plugin entry point.
"""

from __future__ import annotations

import linecache
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[int, str]]:
    """``(first line number, code)`` of every python block of the page."""
    text = PAGE.read_text(encoding="utf-8")
    return [(text[: m.start(1)].count("\n") + 1, m.group(1)) for m in FENCE.finditer(text)]


def _register(found: list[tuple[int, str]]) -> str:
    """Put the page's code lines (the rest blanked) in linecache under a virtual file name."""
    total = PAGE.read_text(encoding="utf-8").count("\n") + 1
    lines = ["\n"] * total
    for start, code in found:
        for k, line in enumerate(code.splitlines(keepends=True)):
            lines[start - 1 + k] = line
    name = f"<doc {PAGE.name}>"
    linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
    return name


def test_the_page_has_the_three_worked_examples_and_a_pytest_file():
    found = blocks()
    code = "\n".join(c for _, c in found)
    assert len(found) >= 6
    assert "row_certificate" in code and "printed_contraction" in code
    assert "exec(report.reproducer" in code
    assert any(c.startswith("# test_") for _, c in found)


def test_every_python_block_runs_in_order(capsys):
    found = blocks()
    filename = _register(found)
    namespace: dict = {"__name__": "docs_testing"}
    for start, code in found:
        if code.startswith("# test_"):
            continue
        padded = "\n" * (start - 1) + code
        exec(compile(padded, filename, "exec"), namespace)
    out = capsys.readouterr().out
    assert "upper bound holds" in out and "upper bound FAILS" in out
    assert "reproduced: upper bound violated" in out
    # the reproducer printed on the page copies the page's own functions
    assert "def my_bound(model, tau):" in namespace["report"].reproducer


@pytest.mark.parametrize("start, code", [b for b in blocks() if b[1].startswith("# test_")])
def test_pytest_file_on_the_page_passes_and_a_false_bound_fails_it(tmp_path, start, code):
    name = code.splitlines()[0].removeprefix("# ").strip()
    (tmp_path / name).write_text(code, encoding="utf-8")
    false = code.replace("assert_bound(tanh_rows, alpha_row,",
                         "assert_bound(lambda m, tau: 0.5 * tanh_rows(m, tau), alpha_row,")
    assert false != code
    (tmp_path / "test_false_bound.py").write_text(false, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         str(tmp_path / name), str(tmp_path / "test_false_bound.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert "1 failed, 1 passed" in run.stdout, run.stdout + run.stderr
    assert "counterexample: ModelSpec(" in run.stdout and "# Reproducer" in run.stdout
