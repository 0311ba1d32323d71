@failures
Feature: codex-46337-hook-output-becomes-the-summary
  Source: openai/codex #46337 (and #46678, anthropics/claude-code #24965, lossless-claude/lcm
  #228): hook output was discarded or could not replace the summary.
  Proves: the Brief the hook returns is persisted verbatim as the compaction summary, with
  details that correlate it to the disk file, and it is exactly what the model reads inside Pi's
  compaction wrapper (spec §3, §8, §18).

  @rule-P19a @rule-P51a @rule-P61a @rule-P62 @rule-P67 @rule-P68a @rule-P68b @rule-P68c
  Scenario: the hook's Brief is the summary Pi persists and the model reads
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction entry comes from an extension
    And its summary is a valid schema-v2 Brief for this session with handoffReason "threshold"
    And its details carry the continuityEventId and artifactPath of that Brief and the SHA-256 of the summary
    And the next model request carries the summary exactly inside Pi's compaction wrapper
