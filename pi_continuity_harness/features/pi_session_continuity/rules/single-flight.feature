@rules
Feature: single-flight
  One in-memory active operation per session: a manual checkpoint that arrives while a
  native Brief is being prepared is refused with a message, and only one Brief is written
  for that compaction (spec §13, §15 unit coverage "single-flight overlap suppression").

  @needs-held-model-calls @rule-P97b @rule-P107a
  Scenario: single-flight
    Given the user has worked through 2 turns
    And the user runs "/continuity checkpoint" while the next Brief is being synthesized
    When native compaction reaches its threshold
    Then a notification refuses the checkpoint because a Brief is already being prepared
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And exactly one synthesis request was made

  @rule-P108a
  Scenario: after a handoff completes, a checkpoint is accepted again
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity checkpoint"
    Then exactly one pending Continuity Brief exists for this session

  @rule-P108a
  Scenario Outline: after a committed overflow or manual handoff, a checkpoint is accepted again
    Given the user has worked through 3 turns
    When native compaction happens for reason "<reason>"
    And the user runs "/continuity checkpoint"
    Then the checkpoint was accepted
    And exactly one pending Continuity Brief exists for this session

    Examples:
      | reason   |
      | overflow |
      | manual   |

  @needs-held-model-calls @rule-P107b
  Scenario: a manual compact while a checkpoint is synthesized is cancelled
    Given the user has worked through 2 turns
    And the user compacts the session manually while the next Brief is being synthesized
    When the user runs "/continuity checkpoint"
    Then native compaction was cancelled
    And no compaction entry was persisted
    And exactly one pending Continuity Brief exists for this session
    And exactly one synthesis request was made

  @rule-P108b
  Scenario: after a failed checkpoint, a checkpoint is accepted again
    Given the user has worked through 2 turns
    And the synthesis model fails with an HTTP 500 error
    When the user runs "/continuity checkpoint"
    Then no pending Continuity Brief exists for this session
    When the user runs "/continuity checkpoint"
    Then the checkpoint was accepted
    And exactly one pending Continuity Brief exists for this session
