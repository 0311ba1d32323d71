@rules
Feature: abort-during-synthesis
  An abort while the Brief is synthesized makes the synthesis call resolve as aborted: the
  hook cancels, Pi persists nothing, no continuation is sent, and the next check point tries
  again (spec §13; psc-lifecycle-on-real-pi §8).

  @needs-held-model-calls @rule-P3a @rule-P5a @rule-P7b @rule-P24 @rule-P67 @rule-P108b @rule-P120a
  Scenario: abort-during-synthesis
    Given the user has worked through 2 turns
    And the user aborts while the next Brief is being synthesized
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no compaction entry was persisted
    And no continuation was submitted
    And no pending Continuity Brief exists for this session
    When the user sends a short prompt
    Then Pi invoked session_before_compact with reason "threshold" again before answering it
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
