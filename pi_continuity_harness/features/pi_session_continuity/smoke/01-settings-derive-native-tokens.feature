@smoke
Feature: settings-derive-native-tokens
  /continuity settings asks for approximate percentages of the current model window,
  previews the exact token values derived with the formulas of spec §12, writes them as a
  project override only after explicit confirmation, keeps every unrelated setting, and
  requires a restart (spec §6, §12, §15 smoke 1, §20.3).

  Background:
    Given the active model has a context window of 372,000 tokens
    And the project settings file holds unrelated settings:
      """
      {"theme": "dark", "packages": ["npm:example"], "compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000, "modelOverrides": {"other/model": {"reserveTokens": 1000}}}}
      """

  @rule-P14 @rule-P38b @rule-P43 @rule-P90g @rule-P93b @rule-P100 @rule-P101a
  Scenario: settings-derive-native-tokens
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    Then the user was shown reserveTokens 93,000 and keepRecentTokens 55,800 before confirming
    And the project settings file sets compaction enabled true, reserveTokens 93000 and keepRecentTokens 55800
    And every unrelated project setting is unchanged
    And no percentage was written to the project settings file
    And a notification says the settings were saved to the project settings file and Pi must be restarted

  @rule-P42a
  Scenario: nothing is written without explicit confirmation
    When the user sets up native compaction at 75% trigger and 15% keep-recent and declines
    Then the user was shown reserveTokens 93,000 and keepRecentTokens 55,800 before declining
    And the project settings file is byte-for-byte unchanged
    And no notification says settings were saved

  @rule-P15 @rule-P95e @rule-P95j @rule-P96 @rule-P101a @rule-P126
  Scenario: written settings are pending until restart, the live policy stays
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    And the user runs "/continuity status"
    Then the status shows the live reserveTokens 16,384 and the written reserveTokens 93,000 pending a restart
    And the footer status reads "Continuity @ ~95.6%"
    When Pi restarts
    And the user runs "/continuity status"
    Then the status shows reserveTokens 93,000 and keepRecentTokens 55,800 with no restart required
