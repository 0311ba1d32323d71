@smoke
Feature: precompact-failure-cancels
  Any failure before the Brief is safely on disk (synthesis, validation, write, re-read,
  settings) returns cancel: true: Pi persists no compaction, never falls back to its own
  summary, and no continuation is queued; the user is told, and a failed postmortem is
  written where it can be (spec §3, §8, §15 smoke 4, §20.6).

  Scenario Outline: precompact-failure-cancels
    Given <fault>
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no compaction entry was persisted
    And Pi made no summarization request of its own
    And no continuation was submitted
    And a notification says Pi Session Continuity failed and native compaction was cancelled
    And no pending Continuity Brief exists for this session

    Examples: synthesis and validation failures
      | phase      | fault                                                      |
      | synthesis  | the synthesis model fails with an HTTP 500 error           |
      | synthesis  | the synthesis model returns an empty Brief                 |
      | synthesis  | the synthesis output is starved by its reasoning budget    |
      | synthesis  | the synthesis model stops at its output limit              |
      | validation | the synthesis model leaves out the heading "## Next Actions" |
      | validation | the synthesis model promotes a directive to an instruction |
      | settings   | the native settings are invalid for the active model       |

    @needs-fs-faults
    Examples: write and re-read failures
      | phase   | fault                                              |
      | write   | writing the pending Brief fails                    |
      | re-read | the pending Brief is corrupted before it is re-read |

  Scenario: a failure writes a failed postmortem, never used as input
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then a failed postmortem artifact exists for this session recording the phase and that compaction was cancelled
    When native compaction reaches its threshold again
    Then the compaction summary is a new pending Brief, not the failed postmortem

  Scenario: the artifact directory cannot be created at all
    Given a file sits where the artifact directory should be
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no compaction entry was persisted
    And a notification says Pi Session Continuity failed and native compaction was cancelled
