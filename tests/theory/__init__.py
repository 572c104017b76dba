"""Tests of glauber.theory: each statement of the paper as a function, against closed forms."""
