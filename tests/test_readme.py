"""The README's Python snippet, run as a script, prints what it computes.

Before issue 24 its lines were bare expressions (``chain.mixing_time(0.25), ...``): a REPL echoes
them, a script prints nothing. Oracles: the snippet's own syntax tree (no statement computes a
value and drops it), and running its toy part, which must print the exact t_mix of the Ising
cycle that :class:`~glauber.exact.ExactChain` computes.
"""

from __future__ import annotations

import ast
import contextlib
import io
from pathlib import Path

import networkx as nx

from glauber.toy_models import ExactChain, IsingModel

README = Path(__file__).resolve().parents[1] / "README.md"


def _snippet() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    return text[start:text.index("```", start)]


def test_no_statement_of_the_snippet_drops_its_value():
    tree = ast.parse(_snippet())
    dropped = [ast.unparse(s) for s in tree.body if isinstance(s, ast.Expr) and not (
        isinstance(s.value, ast.Call) and getattr(s.value.func, "id", None) == "print")]
    assert not dropped, f"computed but never printed when run as a script: {dropped}"
    assert sum(isinstance(s, ast.Expr) for s in tree.body) >= 3


def test_the_toy_part_prints_the_exact_tmix():
    code = _snippet().split("mlm = load_antiberty")[0]  # the AntiBERTy part takes ~30 s
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    tmix = ExactChain(IsingModel(nx.cycle_graph(8)), 2.0).mixing_time(0.25)
    assert f"t_mix(1/4) = {tmix} " in out.getvalue()
    assert "Theorem 5: t_mix(0.25) <=" in out.getvalue()
