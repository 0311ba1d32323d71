@failures
Feature: pi-continue-26-user-input-races-the-continuation
  Source: Tiziano-AI/pi-continue #26: user input raced the pending continuation after a
  compaction, bound later work to the old event and timed out.
  Proves: when the compaction happens at Pi's pre-prompt check point (here, after a failed
  attempt, psc-lifecycle-on-real-pi E1), the user's prompt is answered first and the
  continuation is delivered after it; both reach the model, and there is exactly one
  continuation (spec §10: the continuation need not win queue ordering).

  # Pi 1.0.3 is not busy while a run starts: a continuation sent during its pre-prompt
  # compaction starts a run of its own ahead of the user's prompt (targets/realpi/versions.py).
  @needs-busy-while-run-starts @rule-P3a @rule-P5a @rule-P7b @rule-P20 @rule-P24 @rule-P67 @rule-P82b @rule-P85 @rule-P108b @rule-P125
  Scenario: pre-prompt compaction: the prompt is answered, then the continuation
    Given the user has worked through 2 turns
    And the synthesis model fails with an HTTP 500 error
    When native compaction reaches its threshold
    Then native compaction was cancelled
    When the user sends a short prompt
    Then Pi invoked session_before_compact with reason "threshold" again before answering it
    And exactly one continuation was submitted
    And the model answered the user's prompt before it received the continuation
