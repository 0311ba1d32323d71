@rules
Feature: interrupted-write
  A Brief is written atomically: a temporary file, then a rename (the commit point). A crash
  between the two leaves the temporary file; at the next start it is removed and named, or the
  status names it: never silently left (spec §3, §7; issue 10 item 6).

  @needs-fs-faults @rule-P136
  Scenario: a temporary file left by a crash before the rename is never left silently
    Given Pi crashes between writing the pending Brief's temporary file and renaming it
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And Pi restarts after the crash left a temporary file
    And the user runs "/continuity status"
    Then each temporary file the crash left was removed and named by a notification, or is named by the status

  @rule-P139
  Scenario: another session's temporary file is not this session's to remove
    Given the user has worked through 2 turns
    And the artifact directory holds a temporary file of another session's write in progress
    When Pi restarts
    And the user runs "/continuity checkpoint"
    Then exactly one pending Continuity Brief exists for this session
    And the planted artifacts are unchanged
