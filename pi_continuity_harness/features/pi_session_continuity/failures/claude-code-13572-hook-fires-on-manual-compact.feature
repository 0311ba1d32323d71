@failures
Feature: claude-code-13572-hook-fires-on-manual-compact
  Source: anthropics/claude-code #13572 (and #50467, #15096; can1357/oh-my-pi #4434; openai/codex
  #28633): compaction hooks did not fire on /compact, so the state snapshot was skipped.
  Proves: a manual compaction enters session_before_compact like any other, commits the disk
  Brief with handoffReason manual-compaction and archives it; when that handoff fails, the manual
  compaction is cancelled, visibly (spec §5, §10).

  @rule-P6b @rule-P19c
  Scenario: manual /compact runs the handoff
    Given the user has worked through 3 turns
    When the user compacts the session manually
    Then Pi invoked session_before_compact with reason "manual"
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "manual-compaction"
    And the Brief is archived in this session's archive directory with status "archived"

  @rule-P3a @rule-P5a @rule-P90e
  Scenario: a failing manual handoff cancels the manual compaction
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 3 turns
    When the user compacts the session manually
    Then native compaction was cancelled
    And no compaction entry was persisted
    And a notification says Pi Session Continuity failed and native compaction was cancelled
