@failures
Feature: opencode-27924-compaction-loop-is-bounded
  Source: anomalyco/opencode #27924 (35 consecutive compactions; PRs #37584, #38102, #48828,
  #50233), anthropics/claude-code #6004, #2283, #12556, openai/codex #23018: compaction loops
  burned quota.
  Proves: a persistent synthesis failure fails closed at every check point Pi reaches (no
  cooldown, spec §5), but costs at most one synthesis attempt and one failure notification per
  check point, never a loop within one, and Pi never falls back to its own summary
  (psc-lifecycle-on-real-pi consequence 6).

  @rule-P3a @rule-P5a @rule-P24 @rule-P90e @rule-P120b @rule-P137 @rule-P138
  Scenario: a persistent synthesis failure costs one attempt per check point
    Given the user has worked through 2 turns
    And the synthesis model fails with an HTTP 500 error 10 times
    When native compaction reaches its threshold
    And the user sends 2 prompts whose replies stay above the threshold
    Then every one of the 4 check points since was cancelled with one failure notification
    And no check point made more than one synthesis request
    And no compaction entry was persisted
    And Pi never persisted a summary of its own
