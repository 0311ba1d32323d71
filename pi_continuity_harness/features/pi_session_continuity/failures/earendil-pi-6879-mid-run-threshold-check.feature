@failures
Feature: earendil-pi-6879-mid-run-threshold-check
  Source: earendil-works/pi #6879 (and #5512, #7821, #8833): with no mid-run threshold check,
  context ran past 100% until the provider overflowed. Pi 1.6 checks the threshold between the
  turns of a run, before the next request.
  Proves: a mid-run threshold check point enters the hook and commits the Brief without aborting
  the run; the run finishes its tool turns and final reply, and only then does the continuation
  reach the model (psc-lifecycle-on-real-pi consequence 3).

  @rule-P10 @rule-P19a @rule-P20 @rule-P82b @rule-P85 @rule-P121 @rule-P125
  Scenario: the threshold is checked between the turns of a running run
    Given the user has worked through 2 turns
    When the model calls a tool and reports 150,001 context tokens, then answers
    Then Pi invoked session_before_compact with reason "threshold"
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And exactly one continuation was submitted
    And the continuation reached the model only after the interrupted run's final reply
    And no run was aborted
