@rules
Feature: notifications-and-commands
  Normal states are notified as info, failures as warnings or errors; there is no cleanup or
  compact subcommand; every notification starts with the product name; nothing the user sees
  speaks of loops, campaigns or episodes (spec §4, §11, §12).

  @rule-P92a @rule-P8b @rule-P87a
  Scenario: a committed handoff is notified as info, in the vocabulary of the work
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity status"
    Then the notification saying "Continuity Brief saved to" was info
    And the notification saying "native compaction committed" was info
    And the notification saying "continuation submitted" was info
    And no notification, status, dialog or Brief frontmatter key used the words loop, campaign or episode
    And every notification starts with the product name

  @rule-P92b @rule-P87a
  Scenario: a failed handoff is notified as a warning or an error
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the notification saying "Native compaction was cancelled" was a warning or an error
    And every notification starts with the product name

  @rule-P11
  Scenario: there is no cleanup or compact subcommand
    Given the user has saved a checkpoint
    When the user runs "/continuity cleanup" and "/continuity compact" after it
    Then no artifact file changed since the checkpoint
    And no compaction entry was persisted
    And no compaction was started

  @rule-P93a
  Scenario: the implementation registers one command, /continuity
    Given the user has worked through 2 turns
    When the user runs "/continuity status"
    Then the implementation registered exactly one command, /continuity

  @rule-P92b
  Scenario: a stale pending Brief found after a reload is notified as a warning
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When Pi reloads
    Then a notification says a stale pending Continuity Brief was found for this session and left inert
    And the notification saying "stale pending Continuity Brief found" was a warning or an error

  @rule-P92b
  Scenario: an invalid extension config is notified as a warning
    Given the extension config file holds {"synthesisEffort": "extreme"}
    When Pi starts
    Then a notification names the extension config file and the field "synthesisEffort"
    And the notification saying "session-continuity.json" was a warning or an error

  @rule-P92b
  Scenario: the status shown while a stale pending Brief exists is a warning
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When Pi reloads
    And the user runs "/continuity status"
    Then the status output names the path of every pending Brief of this session
    And the status output was shown as a warning or an error

  @rule-P92b
  Scenario: the status shown after a failed handoff is a warning
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity status"
    Then the status output reports the failure "Internal server error"
    And the status output was shown as a warning or an error

  @rule-P72 @rule-P92a
  Scenario: a legacy v1 artifact in pending/ is history, not a stale pending Brief
    Only a valid same-session pending v2 Brief is stale and inert after a restart; a legacy v1
    artifact is recognised as history, so it puts the status in no warning state.
    Given the artifact directory holds a legacy v1 artifact of this session saying "LEGACY-RESUME-TEXT"
    When Pi reloads
    And the user runs "/continuity status"
    Then the status output names the product and says it is armed
    And the status output was shown as info
