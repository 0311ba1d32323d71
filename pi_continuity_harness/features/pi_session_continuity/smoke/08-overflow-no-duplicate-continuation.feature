@smoke
Feature: overflow-no-duplicate-continuation
  On overflow Pi compacts and retries by itself (willRetry: true). The Brief becomes the
  summary the retry sees; the extension submits nothing, so there is no duplicate turn
  (spec §5, §10, §18, §15 smoke 8, §20.6).

  @rule-P5a @rule-P6b @rule-P19b @rule-P21a @rule-P61a @rule-P63
  Scenario: overflow-no-duplicate-continuation
    Given the user has worked through 2 turns
    When the provider rejects the next request because it exceeds the context window
    Then Pi invoked session_before_compact with reason "overflow" and willRetry true
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "overflow"
    And Pi retried the request exactly once, with the Brief as its summary
    And no continuation was submitted
    And the Brief is archived in this session's archive directory with status "archived"

  @rule-P21b
  Scenario: a silent overflow compacts without a retry and without a continuation
    Given the user has worked through 2 turns
    When the model reports 250,000 input tokens in a completed reply
    Then Pi invoked session_before_compact with reason "overflow" and willRetry false
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "overflow"
    And no continuation was submitted
