@install
Feature: status-reports-every-field
  /continuity status reports extension state, trust and config validity, native token
  settings, the model window, effective percentages, synthesis model and effort, the
  settings path, restart state and artifact paths (spec §11, §12, §20.2).

  @rule-P93b @rule-P95e @rule-P95f @rule-P95g @rule-P95h @rule-P95i @rule-P95j @rule-P95k
  Scenario: status-reports-every-field
    Given the active model has a context window of 372,000 tokens
    And the native settings are reserveTokens 93,000 and keepRecentTokens 55,800
    When the user runs "/continuity status"
    Then the status output names the product and says it is armed
    And the status output shows the model window 372,000, reserve 93,000, effective trigger 279,000 at approximately 75.0% and keep recent 55,800 at approximately 15.0%
    And the status output shows the synthesis model and effort, the project settings path and whether a restart is required
    And the status output shows the artifact directory

  @rule-P95m @rule-P97b
  Scenario: status after a checkpoint names the last artifact
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When the user runs "/continuity status"
    Then the status output names the path of the checkpoint Brief
