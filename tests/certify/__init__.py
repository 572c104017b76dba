"""Tests of the main job: the certify pipeline, its certificate and the glauber certify command."""
