@smoke
Feature: manual-compact-no-auto-continuation
  Manual /compact also creates the durable Brief and custom summary, but forces no
  automatic continuation and no new run (spec §5, §10, §18, §15 smoke 9).

  @rule-P19c @rule-P22 @rule-P61a @rule-P63
  Scenario: manual-compact-no-auto-continuation
    Given the user has worked through 3 turns
    When the user compacts the session manually
    Then Pi invoked session_before_compact with reason "manual"
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "manual-compaction"
    And no continuation was submitted
    And no new run started after the compaction
    And no extension error was reported

  @rule-P123a @rule-P123b
  Scenario: native auto-compaction disabled is a refused state, even for manual compaction
    Given native compaction is disabled in the project settings
    And the user has worked through 3 turns
    When the user compacts the session manually
    Then native compaction was cancelled
    And a notification refuses because native auto-compaction is disabled
