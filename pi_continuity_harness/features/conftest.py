"""Conformance suite wiring: the plugin (options, fixtures, tags) and every step definition.

pytest-bdd step definitions are fixtures; importing them here makes them visible to every
feature of the suite.
"""

from pi_continuity_harness.features.pytest_plugin import (  # noqa: F401
    pytest_addoption,
    pytest_bdd_step_error,
    pytest_collection_modifyitems,
    pytest_configure,
    world,
)
from pi_continuity_harness.features.steps.blitz import *  # noqa: F403
from pi_continuity_harness.features.steps.failures import *  # noqa: F403
from pi_continuity_harness.features.steps.given import *  # noqa: F403
from pi_continuity_harness.features.steps.then import *  # noqa: F403
from pi_continuity_harness.features.steps.when import *  # noqa: F403
