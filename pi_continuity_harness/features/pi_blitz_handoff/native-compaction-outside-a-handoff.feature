@blitz
Feature: native-compaction-outside-a-handoff
  Outside a handoff, pi-blitz-handoff leaves compaction to Pi: only a handoff in flight
  protects the session against compaction (reference: Deferral), so a manual /compact commits
  Pi's own summary, and a successful compaction is what resets the automatic budget.

  Background:
    Given the native settings are reserveTokens 10,000 and keepRecentTokens 2,000

  Scenario: native-compaction-outside-a-handoff
    When the user compacts the session manually after 2 turns
    Then Pi committed its own summary as the compaction

  # Host behaviour (an implementation that does nothing passes it): Pi 1.0.3 and 1.3.0 cap
  # their own summary at 0.8 x reserveTokens, here 8,000 tokens (targets/realpi/versions.py).
  @host @needs-uncapped-summary-output
  Scenario: Pi's own summary may use the model's whole output limit
    When the user compacts the session manually after 2 turns
    Then Pi asked for the summary with the model's whole output limit
