@failures
Feature: earendil-pi-7020-length-overflow-retries-once
  Source: earendil-works/pi #7020: after an overflow reply with stopReason "length" Pi compacts;
  the agent must then go on, not stop. Pi 1.6 treats a length stop below the output limit as
  recoverable: it compacts with willRetry true and retries once (pi-host-1.6 §3, §9.4).
  Proves: the length-stop compaction is an overflow handoff that commits the Brief, Pi's single
  retry sees it as the summary and the extension adds no continuation; a second length stop in
  the retried turn is not compacted again, and nothing loops.

  @rule-P5a @rule-P19b @rule-P21a
  Scenario: a length stop is compacted once and retried once
    Given the user has worked through 2 turns
    When the model stops at its output limit with 160,000 input tokens
    Then Pi invoked session_before_compact with reason "overflow" and willRetry true
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "overflow"
    And Pi retried the request exactly once, with the Brief as its summary
    And no continuation was submitted

  @rule-P21a
  Scenario: a second length stop is not compacted again
    Given the user has worked through 2 turns
    When the model stops at its output limit with 160,000 input tokens, twice
    Then only one compaction entry was persisted
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "overflow"
    And no continuation was submitted
    And no check point made more than one synthesis request
