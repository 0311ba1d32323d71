@smoke
Feature: threshold-continuation-uses-disk
  After a matching threshold session_compact, one visible followUp continuation is
  submitted: the verified pending disk bytes plus the fixed suffix of spec §10, built before
  archival rewrites the status (spec §10, §18, §15 smoke 7).

  @rule-P10 @rule-P20 @rule-P77 @rule-P82a @rule-P82b @rule-P82c @rule-P85 @rule-P90d
  Scenario: threshold-continuation-uses-disk
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then exactly one continuation was submitted
    And the continuation is the compaction summary followed by the fixed continuation suffix
    And the continuation reached the model after the compaction, in the same settled prompt
    And a notification says the continuation was submitted from the saved Brief

  @rule-P20 @rule-P82b @rule-P85 @rule-P125
  Scenario: a continuation after mid-run compaction waits for the run's final reply
    Given the user has worked through 2 turns
    When the model calls a tool and reports 150,001 context tokens, then answers
    Then Pi invoked session_before_compact with reason "threshold"
    And exactly one continuation was submitted
    And the continuation reached the model only after the interrupted run's final reply
