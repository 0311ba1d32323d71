@failures
Feature: psc-0.1.3-threshold-fires-again-after-compaction
  Source: pi-session-continuity CHANGELOG 0.1.3: a stale ctx.getContextUsage() made the
  extension's own threshold never fire again after a compaction.
  Proves: the trigger is Pi's native threshold only, so after a compaction (while the first
  Brief stays in context and usage is unknown until the next reply) the next crossing enters the
  hook again and commits and archives a new Brief; nothing of the first handoff blocks it (spec
  §5, §13, §11 "getContextUsage() is null after compaction").

  @rule-P19a
  Scenario: the threshold fires again after a compaction
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user works through 2 more turns
    And native compaction reaches its threshold again
    Then Pi invoked session_before_compact with reason "threshold" again
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And every compaction summary is archived
