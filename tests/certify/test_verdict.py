"""The verdict block that opens ``glauber certify``'s table, and the vacuous marks.

Oracles: the claims of the certificate itself (the block must sort them by their own
``rigorous`` flags and conclusions), and Theorem 8's closed form on the Ising cycle: in an aligned
state every site's margin is ``Delta* = 4 J`` (docs/theory.md, `thm8-escape`), so the escape
bound ``|V| e^{-Delta*/tau} = 2 e^{-4/tau}`` is >= 1 (vacuous) exactly when ``tau >= 4 / ln 2``.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np

from glauber.certify import certify, format_certificate
from glauber.certify.render import LEGEND, verdict_lines
from glauber.toy_models import IsingModel

SMALL = dict(n_rectangles=5, budget=5, n_pairs=1)


def _block(cert) -> str:
    return "\n".join(verdict_lines(cert))


def test_exact_certificate_is_listed_as_proved_and_explained_once():
    cert = certify(IsingModel(nx.cycle_graph(4)), 4.0, **SMALL)
    claim = cert.claim("thm5-corrected")
    assert claim.rigorous and claim.hypothesis_held  # the oracle the block must follow
    text = format_certificate(cert)
    head, claims = text.split("== model ==")
    proved = head.split("proved:")[1].split("estimated only")[0]
    assert "Theorem 5, corrected" in proved
    assert text.count("legend of the claims") == 1 and "[held; RIGOROUS]" in head
    assert head.index("== verdict ==") < head.index("legend")


def test_sampled_influences_are_never_listed_as_proved():
    cert = certify(IsingModel(nx.cycle_graph(4)), 4.0, exhaustive=False, exact=False,
                   search_budget=0, **SMALL)
    assert not cert.claim("thm5-corrected").rigorous
    proved = _block(cert).split("estimated only")[0]
    assert "Theorem 5, corrected" not in proved
    for c in cert.claims:
        if c.rigorous and not c.certifies.startswith("nothing"):
            assert c.key != "thm5-corrected"


def test_vacuous_trap_bounds_are_marked_and_not_claimed():
    tau = 8.0
    assert 2 * math.exp(-4 / tau) >= 1 and math.exp(4 / tau) / 8 < 1  # both bounds vacuous
    cert = certify(IsingModel(nx.cycle_graph(4)), tau, np.zeros((1, 4), dtype=int), **SMALL)
    block = _block(cert)
    assert "Theorem 8 on a perfect trap (its bounds are vacuous)" in block
    assert "Theorem 8" not in block.split("estimated only")[0]  # not under "proved"
    margins = format_certificate(cert).split("== margins & Theorem 8 ==")[1].split("==")[0]
    assert "(vacuous)" in margins


def test_useful_trap_bound_is_proved_without_a_vacuous_mark():
    tau = 1.0
    assert 2 * math.exp(-4 / tau) < 1
    cert = certify(IsingModel(nx.cycle_graph(4)), tau, np.zeros((1, 4), dtype=int), **SMALL)
    proved = _block(cert).split("estimated only")[0]
    assert "Theorem 8 on a perfect trap" in proved and "vacuous" not in proved


def test_legend_names_every_label():
    for label in ("[held; RIGOROUS]", "[held; not rigorous]", "[not held;", "(vacuous)"):
        assert label in LEGEND


def test_searched_budget_is_capped_at_a_tabulation_and_reported_as_its_fraction():
    # 6 x 2^5 = 192 distinct queries tabulate the 6-cycle: the default search budget (2,000)
    # is capped there (at a tabulation the exact value is known), and the model section says
    # how many distinct queries the search asked and which fraction of the table that is.
    cert = certify(IsingModel(nx.cycle_graph(6)), 1.0, exhaustive=False, exact=False, **SMALL)
    assert cert.settings.search_budget == 192
    r = cert.influence
    assert r.searched and 0 < r.queries <= 192 and r.query_fraction == r.queries / 192
    assert (f"searched: {r.queries:,} distinct queries ({100 * r.query_fraction:.3g}% of the "
            "n q^(n-1) that tabulate the model)") in format_certificate(cert)
