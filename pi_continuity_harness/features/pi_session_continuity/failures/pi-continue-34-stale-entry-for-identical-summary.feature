@failures
Feature: pi-continue-34-stale-entry-for-identical-summary
  Source: Tiziano-AI/pi-continue #34: the host looked compaction entries up by summary text and
  handed back an older entry for an identical summary, so the resume proof stalled. Pi 1.6 does
  the same (session_compact gets the first entry with an equal summary, pi-host-1.6 §9.9).
  Proves: every handoff writes a Brief with unique bytes, so each session_compact is given the
  entry with its own summary, each Brief is archived, and each threshold compaction gets exactly
  its own continuation (no stale dedupe either: willytop8/OpenCode-goal-plugin PR #58).

  @rule-P19a @rule-P20 @rule-P64i @rule-P82a @rule-P82b @rule-P85
  Scenario: two handoffs, two distinct Briefs, each commit matched to its own entry
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user works through 2 more turns
    And native compaction reaches its threshold again
    Then the two compaction summaries are Briefs of this session with different eventIds
    And each session_compact event was given the entry with its own summary
    And every compaction summary is archived
    And one continuation was submitted for each threshold compaction
