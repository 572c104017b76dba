"""glauber: exact and numerical certificates for Glauber dynamics on masked language models."""

__version__ = "0.1.0"
