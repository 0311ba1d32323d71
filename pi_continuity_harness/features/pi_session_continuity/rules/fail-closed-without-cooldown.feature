@rules
Feature: fail-closed-without-cooldown
  Failures are visible and fail closed, with no cooldown that silently permits a later
  compaction without a Brief: every later check point tries again, and the first one after
  the fault heals commits a valid Brief (spec §5; psc-lifecycle-on-real-pi consequence 6).

  @rule-P3a @rule-P5a @rule-P7b @rule-P24 @rule-P67 @rule-P108b @rule-P120b
  Scenario: fail-closed-without-cooldown
    Given the user has worked through 2 turns
    And the synthesis model fails with an HTTP 500 error
    When native compaction reaches its threshold
    Then native compaction was cancelled
    When the user sends a short prompt
    Then Pi invoked session_before_compact again before answering it
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And Pi never persisted a summary of its own

  @needs-fs-faults @rule-P5b
  Scenario: an unexpected internal error inside the hook cancels and never reaches Pi
    Given writing the pending Brief raises an unexpected internal error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no compaction entry was persisted
    And Pi made no summarization request of its own
    And no extension error was reported
    And a notification says Pi Session Continuity failed and native compaction was cancelled
