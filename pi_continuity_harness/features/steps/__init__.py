"""The step library of the conformance suite (Given, When, Then), in the user's language.

Steps drive a :class:`~pi_continuity_harness.targets.target.Target` through the
:class:`~pi_continuity_harness.features.world.World`; none reaches into a host's internals.
"""
