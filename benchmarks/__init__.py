"""Benchmarks of glauber: each measures a speed against a baseline timed in the same run.

Run one with ``python benchmarks/<name>.py`` or all with ``make bench``
(``python benchmarks/run_all.py``). See ``benchmarks/README.md`` and ``docs/performance.md``.
"""
