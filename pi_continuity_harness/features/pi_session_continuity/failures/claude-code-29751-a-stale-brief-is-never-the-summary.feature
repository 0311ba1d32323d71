@failures
Feature: claude-code-29751-a-stale-brief-is-never-the-summary
  Source: anthropics/claude-code #29751 (stale in-progress tasks; also #9796, #24792, #11483):
  stale summaries came back after compaction.
  Proves: a same-session pending Brief left over from before a reload (a checkpoint, or an
  interrupted handoff) stays inert: the next compaction synthesizes and commits a new Brief,
  and the stale one is neither the summary nor changed (spec §7, §13).

  @rule-P59b @rule-P59d
  Scenario: a checkpoint left pending across a reload never becomes a summary
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When Pi reloads
    And native compaction reaches its threshold
    Then the compaction summary is a new Brief, not the stale checkpoint
    And the stale checkpoint is still pending and unchanged
