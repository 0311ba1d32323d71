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

  @needs-fs-faults @rule-P54
  Scenario: a Brief reconciled at startup is archived with the same retention
    Given Pi crashes right before the committed Brief is archived
    And the artifact directory holds 10 archived Briefs of this session
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And Pi restarts
    And the user runs "/continuity status"
    Then the Brief committed before the crash is archived and the status names its archive path
    And the session's archive directory holds exactly 10 Briefs
