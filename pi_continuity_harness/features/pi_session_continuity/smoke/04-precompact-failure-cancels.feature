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

    @rule-P3a @rule-P4 @rule-P5a @rule-P90e @rule-P120b
    Examples: a synthesis that fails
      | phase      | fault                                                      |
      | synthesis  | the synthesis model fails with an HTTP 500 error           |
      | synthesis  | the synthesis model fails mid-stream after streaming the whole Brief |

    @rule-P3a @rule-P4 @rule-P5a @rule-P90e @rule-P120e
    Examples: a synthesis with no text
      | phase      | fault                                                      |
      | synthesis  | the synthesis model returns an empty Brief                 |

    @rule-P3a @rule-P4 @rule-P5a @rule-P90e @rule-P120c
    Examples: a synthesis cut short
      | phase      | fault                                                      |
      | synthesis  | the synthesis output is starved by its reasoning budget    |
      | synthesis  | the synthesis model stops at its output limit              |
      | synthesis  | the synthesis model stops at its output limit in the last sentence of the Brief |

    @rule-P3b @rule-P4 @rule-P5a @rule-P76a @rule-P90e
    Examples: a Brief without a mandatory heading
      | phase      | fault                                                      |
      | validation | the synthesis model leaves out the heading "## Next Actions" |

    @rule-P3b @rule-P4 @rule-P5a @rule-P90e @rule-P117a
    Examples: a Brief that promotes a directive
      | phase      | fault                                                      |
      | validation | the synthesis model promotes a directive to an instruction |

    @rule-P4 @rule-P5a @rule-P18b @rule-P24 @rule-P29b @rule-P90e
    Examples: settings invalid for the active model
      | phase      | fault                                                      |
      | settings   | the native settings are invalid for the active model       |

    @needs-fs-faults @rule-P3c @rule-P4 @rule-P5a @rule-P73 @rule-P90e
    Examples: a write failure
      | phase   | fault                                              |
      | write   | writing the pending Brief fails                    |

    @needs-fs-faults @rule-P3d @rule-P4 @rule-P5a @rule-P90e @rule-P131
    Examples: a re-read failure
      | phase   | fault                                              |
      | re-read | the pending Brief is corrupted before it is re-read |

  @rule-P7a @rule-P7b @rule-P24 @rule-P66a @rule-P67 @rule-P108b
  Scenario: a failure writes a failed postmortem, never used as input
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then a failed postmortem artifact exists for this session recording the phase and that compaction was cancelled
    When native compaction reaches its threshold again
    Then the compaction summary is a new pending Brief, not the failed postmortem

  @rule-P3c @rule-P5a @rule-P73 @rule-P90e
  Scenario: the artifact directory cannot be created at all
    Given a file sits where the artifact directory should be
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no compaction entry was persisted
    And a notification says Pi Session Continuity failed and native compaction was cancelled
