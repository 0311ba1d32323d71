"""The conformance suite: Gherkin features, the step library, and the targets they drive.

``SUITE_DIR`` is the directory to hand to pytest; :mod:`.suite` runs it programmatically.
"""

from pathlib import Path

from .sim_target import SimTarget
from .target import (
    CAPABILITIES,
    Observation,
    ObservedRequest,
    OperationOutcome,
    Target,
    TargetUnavailableError,
)

__all__ = [
    "CAPABILITIES",
    "SUITE_DIR",
    "Observation",
    "ObservedRequest",
    "OperationOutcome",
    "SimTarget",
    "Target",
    "TargetUnavailableError",
]

SUITE_DIR = Path(__file__).resolve().parent
