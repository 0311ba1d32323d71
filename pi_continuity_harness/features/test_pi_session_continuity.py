"""The Pi Session Continuity conformance suite: every feature under ``pi_session_continuity/``."""

from pytest_bdd import scenarios

scenarios("pi_session_continuity")
