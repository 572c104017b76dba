"""Exact verification of every statement of THEORY.md on toy chains."""
