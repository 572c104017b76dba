"""Tests of the Hugging Face backend: real (AntiBERTy, Sapiens) and tiny random models."""
