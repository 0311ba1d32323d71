@rules
Feature: commit-boundary
  session_compact is the commit boundary: the committed Brief is archived, then (threshold only)
  the retained continuation is submitted; a Brief Pi committed before the process died is
  reconciled at the next start, never compacted or continued again (spec §13, §18).

  @needs-fs-faults @rule-P84
  Scenario: a Brief that could not be archived is never submitted as the continuation
    Given archiving the committed Brief fails
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the compaction summary is a new Brief of this session
    And exactly one pending Continuity Brief exists for this session
    And no continuation was submitted

  @needs-fs-faults @rule-P113a @rule-P113b
  Scenario: a Brief committed just before a crash is reconciled at the next start
    Given Pi crashes right before the committed Brief is archived
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And Pi restarts
    Then only one compaction entry was persisted
    And no message was submitted to the model after the restart
    When the user runs "/continuity status"
    Then the Brief committed before the crash is archived and the status names its archive path

  @rule-P1
  Scenario: the pending Brief is on disk before Pi appends the compaction entry
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user works through 2 more turns
    And native compaction happens for reason "manual"
    Then the persisted compaction entry comes from an extension
    And when Pi appended each compaction entry a pending Brief of this session already held its summary
