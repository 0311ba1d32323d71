@failures
Feature: psc-0.1.4-synthesis-is-not-aborted-by-the-extension
  Source: pi-session-continuity CHANGELOG 0.1.4: ctx.abort() before synthesis killed the
  synthesis call itself (its signal aborted with the run).
  Proves: the hook synthesizes with Pi's compaction signal and never aborts the run or its own
  call, at a post-run and at a mid-run check point: the synthesis request completes and the
  Brief commits (spec §3, §13).

  @rule-P19a @rule-P121
  Scenario: post-run threshold synthesis completes
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then no synthesis request was aborted
    And no run was aborted
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"

  @rule-P19a @rule-P121
  Scenario: mid-run threshold synthesis completes
    Given the user has worked through 2 turns
    When the model calls a tool and reports 150,001 context tokens, then answers
    Then no synthesis request was aborted
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
