@failures
Feature: psc-scope-0016-empty-synthesis-cancels
  Source: pi-session-continuity deploy note SCOPE-0016: synthesis on a Codex model returned an
  empty Brief (the reasoning effort ate the output budget).
  Proves: an empty synthesis fails closed (cancelled, told, nothing pending) and the next check
  point commits a valid Brief; and on a reasoning model the extension reserves output budget for
  the effort, so the Brief is not starved (spec §5).

  @rule-P3a @rule-P5a @rule-P7b @rule-P24 @rule-P67 @rule-P90e @rule-P108b @rule-P120e
  Scenario: an empty synthesis cancels, the next check point commits
    Given the user has worked through 2 turns
    And the synthesis model returns an empty Brief
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And a notification says Pi Session Continuity failed and native compaction was cancelled
    And no pending Continuity Brief exists for this session
    When the user sends a short prompt
    Then the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"

  @rule-P23 @rule-P137
  Scenario: a reasoning model's effort does not starve the Brief
    Given the active model reasons, with an output limit of 65,536 tokens
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And exactly one synthesis request was made
