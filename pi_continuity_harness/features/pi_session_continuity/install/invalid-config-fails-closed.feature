@install
Feature: invalid-config-fails-closed
  An invalid extension config or structurally invalid native settings fail loudly, name the
  path (and the field), and disable automatic behaviour until corrected (spec §6, §11, §20.7).

  @rule-P36a @rule-P38a @rule-P46a @rule-P46b
  Scenario: invalid-config-fails-closed
    Given the extension config file holds {"synthesisEffort": "extreme"}
    And the user has worked through 2 turns
    Then a notification names the extension config file and the field "synthesisEffort"
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no Continuity Brief was written

  @rule-P26 @rule-P38a @rule-P46a
  Scenario: a removed percentage field is rejected
    Given the extension config file holds {"enabled": true, "triggerPercent": 75}
    When Pi starts
    Then a notification names the extension config file and the field "triggerPercent"

  @rule-P18a @rule-P29b @rule-P38b @rule-P90f @rule-P91
  Scenario: invalid native settings show the values, the window and the path
    Given the active model has a context window of 100,000 tokens
    And the native settings are reserveTokens 100,000 and keepRecentTokens 2,000
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model
    And that notification shows enabled, reserveTokens 100000, keepRecentTokens 2000, contextWindow 100000 and the project settings path
