@rules
Feature: artifacts-and-frontmatter
  Artifacts are session-scoped under the resolved artifact directory (relative values under
  <cwd>/<CONFIG_DIR_NAME>/, absolute values as given): pending/<eventId>.md,
  archive/<timestamp>-<eventId>.md, failed/<timestamp>-<eventId>.md. "saved to" names the
  pending file of the event. The frontmatter lists the schema's fields in order and describes
  the event: Pi's tokensBefore (for a checkpoint, Pi's context usage), the effective percentages
  of the recorded tokens, the leaf before the handoff (spec §6, §7, §8).

  @rule-P45a
  Scenario: a relative artifact directory resolves under the project's config directory
    Given the extension config file holds {"artifactDirectory": "briefs"}
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then a pending Brief of this session lies under "$CONFIG/briefs"

  @rule-P45b
  Scenario: an absolute artifact directory is used as given
    Given the user has worked through 2 turns
    When the extension config names the absolute artifact directory "elsewhere-briefs" beside the project
    And Pi reloads
    And the user runs "/continuity checkpoint"
    Then a pending Brief of this session lies under the absolute artifact directory "elsewhere-briefs"

  @rule-P51b @rule-P53b @rule-P61b @rule-P64d @rule-P64g @rule-P65
  Scenario: a native handoff's Brief describes its event and is archived by timestamp and eventId
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then a notification said the Brief was saved to the artifactPath of the compaction details
    And the Brief's frontmatter fields follow the schema order
    And the Brief's frontmatter records Pi's tokensBefore, the effective percentages of its tokens and the leaf before the handoff
    And the archived Brief's file name is <timestamp>-<eventId>.md

  @rule-P64d
  Scenario: a checkpoint's Brief records Pi's context usage as its tokenCountAtTrigger
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    Then the checkpoint Brief records Pi's context usage as its tokenCountAtTrigger

  @rule-P51c
  Scenario: a failed postmortem is named by timestamp and eventId
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the failed postmortem lies in this session's failed directory named <timestamp>-<eventId>.md

  @rule-P64h
  Scenario: a native handoff's Brief names the session it hands off
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the Brief's frontmatter records this session's id and session file

  @rule-P64g
  Scenario: the effective percentages are those of the tokens when they are not round numbers
    Given the active model has a context window of 372,000 tokens
    And the native settings are reserveTokens 16,384 and keepRecentTokens 2,230
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the Brief's frontmatter records Pi's tokensBefore, the effective percentages of its tokens and the leaf before the handoff
