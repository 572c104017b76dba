"""Exact verification of every statement of docs/theory.md on toy chains."""
