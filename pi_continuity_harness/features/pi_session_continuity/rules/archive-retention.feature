@rules
Feature: archive-retention
  After each successful archive, only the newest 10 archived Briefs of the session are kept
  (spec §6 archiveRetention, §7).

  @rule-P25d @rule-P54
  Scenario: archive-retention
    Given the user has worked through 2 turns
    When native compaction reaches its threshold 12 times, with 2 turns of work between
    Then the session's archive directory holds exactly 10 Briefs
    And they are the 10 newest of the 12 compaction summaries
