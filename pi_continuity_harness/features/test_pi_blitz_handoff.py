"""The pi-blitz-handoff conformance suite: every feature under ``pi_blitz_handoff/``."""

from pytest_bdd import scenarios

scenarios("pi_blitz_handoff")
