@failures
Feature: nicobailon-pi-subagents-2150-duplicate-continuation-after-overflow
  Source: nicobailon/pi-subagents PR #2150 (and #2144): an extension re-drove the agent after
  an automatic compaction that Pi already continues, so the work ran twice.
  Proves: on overflow Pi's own retry is the continuation: the retry sees the Brief as its
  summary, exactly once, and the extension submits nothing; a silent overflow (a completed reply
  above the window) is compacted without a retry and without a continuation (spec §10, §18).

  @rule-P21a
  Scenario: overflow recovery is Pi's retry, never a second continuation
    Given the user has worked through 2 turns
    When the provider rejects the next request because it exceeds the context window
    Then Pi invoked session_before_compact with reason "overflow" and willRetry true
    And Pi retried the request exactly once, with the Brief as its summary
    And no continuation was submitted

  @rule-P21b
  Scenario: a silent overflow is not continued either
    Given the user has worked through 2 turns
    When the model reports 250,000 input tokens in a completed reply
    Then Pi invoked session_before_compact with reason "overflow" and willRetry false
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "overflow"
    And no continuation was submitted
