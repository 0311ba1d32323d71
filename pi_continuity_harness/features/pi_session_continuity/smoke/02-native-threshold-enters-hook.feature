@smoke
Feature: native-threshold-enters-hook
  Pi's native threshold, currentContextTokens > contextWindow - reserveTokens, invokes
  session_before_compact with Pi's effective settings; the extension computes no trigger
  of its own (spec §5, §13, §15 smoke 2).

  @rule-P90a
  Scenario: native-threshold-enters-hook
    Given the user has worked through 2 turns
    When the model reports 150,001 context tokens after the next prompt
    Then Pi invoked session_before_compact with reason "threshold"
    And the hook was given the settings enabled true, reserveTokens 50000 and keepRecentTokens 2000
    And a notification says native compaction reached its threshold and a durable Brief is being prepared

  @needs-held-model-calls @rule-P90a
  Scenario: the threshold notice is shown before the Brief is synthesized
    Given the user runs "/continuity status" while the next Brief is being synthesized
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the threshold notification came before the status shown during the synthesis

  # Pi's own strict ">" (agent-session.js shouldCompact); holds for any extension.
  @host
  Scenario: the threshold is strict
    Given the user has worked through 2 turns
    When the model reports 150,000 context tokens after the next prompt
    Then Pi did not invoke session_before_compact
    And no Continuity Brief was written

  @rule-P13a @rule-P13b
  Scenario: the extension starts no compaction of its own below the threshold
    Given the user has worked through 4 turns
    Then Pi did not invoke session_before_compact
    And no compaction entry was persisted
    And the footer status reads "Continuity @ ~75.0%"
