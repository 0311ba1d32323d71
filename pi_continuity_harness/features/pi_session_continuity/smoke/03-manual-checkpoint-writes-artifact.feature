@smoke
Feature: manual-checkpoint-writes-artifact
  /continuity checkpoint synthesizes, validates and writes a schema-v2 Brief as pending,
  records the effective native policy, and neither compacts nor submits a continuation
  (spec §5 v0, §12, §15 smoke 3, §20.4).

  @rule-P25a @rule-P25d @rule-P39 @rule-P51a @rule-P53a @rule-P61a @rule-P62 @rule-P63 @rule-P64e @rule-P64f @rule-P64h @rule-P66a @rule-P76a @rule-P77 @rule-P90b @rule-P93b @rule-P97a @rule-P97b @rule-P97c
  Scenario: manual-checkpoint-writes-artifact
    Given the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then exactly one pending Continuity Brief exists for this session
    And its file lies in this session's pending directory named <eventId>.md
    And it is a valid schema-v2 Brief with status "pending" and handoffReason "checkpoint"
    And it records reserveTokens 50000 and keepRecentTokens 2000 and the active context window
    And a notification says the Brief was saved to its resolved file path
    And no compaction entry was persisted
    And no message was submitted to the model after the checkpoint
