"""The conformance suite's pytest plugin, as pytest loads it: entry point ``pytest11``
``pi_continuity_harness.features.plugin`` (named after this module, so ``-p
pi_continuity_harness.features.plugin`` and the entry point are one registration).

It is the hooks and the ``world`` fixture of :mod:`.pytest_plugin` plus every step definition of
the step library (pytest-bdd step definitions are fixtures; a plugin's fixtures are visible to
every test, so the stock steps serve the suite's features and feature files of your own, whose
``conftest.py`` may add steps). ``pi-continuity-harness run`` passes ``-p`` with this name, so
the suite also runs where plugin autoloading is off (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``).
"""

from pi_continuity_harness.features.pytest_plugin import (  # noqa: F401
    pytest_addoption,
    pytest_bdd_step_error,
    pytest_collect_file,
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_ignore_collect,
    pytest_report_from_serializable,
    pytest_report_to_serializable,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
    pytest_unconfigure,
    world,
)
from pi_continuity_harness.features.steps.blitz import *  # noqa: F403
from pi_continuity_harness.features.steps.blitz_concurrent import *  # noqa: F403
from pi_continuity_harness.features.steps.blitz_faults import *  # noqa: F403
from pi_continuity_harness.features.steps.blitz_then import *  # noqa: F403
from pi_continuity_harness.features.steps.failures import *  # noqa: F403
from pi_continuity_harness.features.steps.given import *  # noqa: F403
from pi_continuity_harness.features.steps.host import *  # noqa: F403
from pi_continuity_harness.features.steps.rules import *  # noqa: F403
from pi_continuity_harness.features.steps.streams import *  # noqa: F403
from pi_continuity_harness.features.steps.then import *  # noqa: F403
from pi_continuity_harness.features.steps.when import *  # noqa: F403
