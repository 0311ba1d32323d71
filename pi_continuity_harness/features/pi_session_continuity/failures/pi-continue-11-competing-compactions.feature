@failures
Feature: pi-continue-11-competing-compactions
  Source: Tiziano-AI/pi-continue #11 (also #19 and PR #14): users on llama.cpp and vLLM ran a
  second compaction path next to the continuity extension; compactions competed, Pi answered
  "Already compacted" and the handoff failed.
  Proves: when another extension takes a compaction away (it cancels, or it replaces the
  result), no Brief of ours is committed, archived or continued, the mismatch is reported, and
  the single-flight gate is released, so the next checkpoint is accepted; and a manual compact
  that Pi refuses as "Already compacted" is no extension error.

  @rule-P6a @rule-P90b @rule-P110a
  Scenario: another extension cancels the compaction
    Given another extension loaded after it cancels every compaction
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no compaction entry was persisted
    And no continuation was submitted
    And no Brief was archived
    When the user runs "/continuity checkpoint"
    Then the checkpoint was accepted

  @rule-P83 @rule-P90b @rule-P111a @rule-P111b
  Scenario: another extension replaces the result
    Given another extension loaded after it returns its own compaction
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction summary is not a Continuity Brief
    And no Brief was archived
    And no continuation was submitted
    And a notification reports that the compaction did not match the prepared Brief
    When the user runs "/continuity checkpoint"
    Then the checkpoint was accepted

  # Pi refuses the second /compact itself, before any hook (agent-session.js compact); holds
  # for any extension.
  @host
  Scenario: a manual compact refused as "Already compacted" is no extension error
    Given the user has worked through 3 turns
    When the user compacts the session manually
    And the user compacts the session manually
    Then only one compaction entry was persisted
    And no extension error was reported
