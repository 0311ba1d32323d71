@smoke
Feature: cross-session-or-hash-mismatch-rejected
  Only a valid same-session pending v2 Brief may become the summary; artifacts of other
  sessions, legacy v1 artifacts, failed postmortems and archived Briefs are inert, even when
  their bodies hold plausible continuation text (spec §7, §8, §15 smoke 12).

  @rule-P58 @rule-P67 @rule-P72 @rule-P139
  Scenario: cross-session-or-hash-mismatch-rejected
    Given the artifact directory holds a pending Brief of another session saying "FOREIGN-RESUME-TEXT"
    And the artifact directory holds a legacy v1 artifact of this session saying "LEGACY-RESUME-TEXT"
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the compaction summary is a new Brief of this session
    And no model request contains "FOREIGN-RESUME-TEXT" or "LEGACY-RESUME-TEXT"
    And the planted artifacts are unchanged

  @rule-P7b @rule-P7c @rule-P66a @rule-P67 @rule-P108b
  Scenario: a failed postmortem is never summary or prompt input
    Given the user has worked through 2 turns
    And the synthesis model fails with an HTTP 500 error
    When native compaction reaches its threshold
    And native compaction reaches its threshold again
    Then the compaction summary is a new Brief of this session
    And no model request after the failure contains the failed postmortem's text

  @rule-P71a
  Scenario: an archived Brief is never summary or prompt input
    Given the artifact directory holds an archived Brief of this session saying "OWN-ARCHIVED-TEXT"
    And the artifact directory holds an archived Brief of another session saying "FOREIGN-ARCHIVED-TEXT"
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the compaction summary is a new Brief of this session
    And no model request contains "OWN-ARCHIVED-TEXT" or "FOREIGN-ARCHIVED-TEXT"
