@rules
Feature: failed-postmortem
  When a handoff fails, a failed artifact is written where the filesystem allows it: a
  postmortem only, never compaction or resume input. Without a body it is a "# Continuity
  Brief Failure" record of the phase, the error, the event and session, and that compaction was
  cancelled and no continuation submitted; with a partial Brief it keeps schema-v2 frontmatter
  with status failed and the headings it had. Nothing stays pending (spec §3, §8).

  @rule-P75a @rule-P75b @rule-P75c @rule-P75d @rule-P75e @rule-P75f
  Scenario: a synthesis failure leaves a failure record
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the failed postmortem's body starts with "# Continuity Brief Failure"
    And the failed postmortem records the phase "synthesis", the error "Internal server error", this session's id and its eventId
    And the failed postmortem says native compaction was cancelled and no continuation prompt was submitted
    And no pending Continuity Brief exists for this session

  @rule-P74
  Scenario: a partial Brief that failed validation is kept as a schema-v2 failed Brief
    Given the synthesis model leaves out the heading "## Next Actions"
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the failed postmortem is a schema-v2 Brief with status "failed"
    And the failed postmortem keeps the headings "## Task" and "## Recovery Instructions"

  @needs-fs-faults @rule-P66a @rule-P74
  Scenario Outline: a Brief that was written but not made durable is retired with status failed
    Its frontmatter was built before the write, with status pending: the failed copy must say
    failed, not keep the pending status with a new updatedAt.
    Given <fault>
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the failed postmortem is a schema-v2 Brief with status "failed"
    And no pending Continuity Brief exists for this session

    Examples:
      | fault                                               |
      | writing the pending Brief fails                     |
      | the pending Brief is corrupted before it is re-read |
