"""Tests of glauber.testing: strategies, check_bound and the examples of docs/testing.md."""
