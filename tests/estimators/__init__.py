"""Tests of glauber.estimators."""
