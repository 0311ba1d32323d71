"""Pi Continuity Harness: a deterministic Pi 1.6 simulator, reference continuity
extensions, and one Gherkin conformance suite that runs on the simulator and on real Pi."""

__version__ = "0.1.0"

#: The Pi release the simulator models, and the release the real-Pi target drives by default
#: (``--pi-version`` picks another supported one: ``targets.realpi.install.SUPPORTED_PI_VERSIONS``).
PI_VERSION = "1.6.0"
