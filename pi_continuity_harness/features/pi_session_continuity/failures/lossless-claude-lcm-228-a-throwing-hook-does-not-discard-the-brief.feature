@failures
Feature: lossless-claude-lcm-228-a-throwing-hook-does-not-discard-the-brief
  Source: lossless-claude/lcm #228 (exit code 2 dropped the hook's stdout; also invalid hook
  output in awslabs/aidlc-workflows #593, Yeachan-Heo/oh-my-claudecode PR #177): one failing hook
  discarded another's output.
  Proves: when another extension's session_before_compact handler throws, Pi isolates the error
  (pi-host-1.6 §9.6), and the Brief still becomes the summary, is archived and is continued once.

  @rule-P19a @rule-P20 @rule-P82b @rule-P85
  Scenario: another extension's hook throws; the Brief still becomes the summary
    Given another extension loaded after it throws an error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction entry comes from an extension
    And its summary is a valid schema-v2 Brief for this session with handoffReason "threshold"
    And the Brief is archived in this session's archive directory with status "archived"
    And exactly one continuation was submitted
