@install
Feature: status-reports-every-field
  /continuity status reports extension state, trust and config validity, native token
  settings, the model window, effective percentages, synthesis model and effort, the
  settings path, restart state, the current operation, the last artifact or failure and any
  stale pending Brief (spec §7, §11, §12, §20.2).

  @rule-P88 @rule-P93b @rule-P95a @rule-P95b @rule-P95c @rule-P95d @rule-P95e @rule-P95f @rule-P95g @rule-P95h @rule-P95i @rule-P95j @rule-P95k
  Scenario: status-reports-every-field
    Given the active model has a context window of 372,000 tokens
    And the native settings are reserveTokens 93,000 and keepRecentTokens 55,800
    When the user runs "/continuity status"
    Then the status output names the product and says it is armed
    And the status output begins with the block of spec §11 for window 372,000, reserve 93,000, trigger 279,000 at 75.0% and keep recent 55,800 at 15.0%
    And the status output shows the model window 372,000, reserve 93,000, effective trigger 279,000 at approximately 75.0% and keep recent 55,800 at approximately 15.0%
    And the status output says the extension is enabled, the project is trusted, the config is valid and native compaction is enabled
    And the status output shows the synthesis model and effort, the project settings path and whether a restart is required
    And the status output shows the artifact directory

  @rule-P95a
  Scenario: status says when the extension is disabled
    Given the extension config file holds {"enabled": false}
    When the user runs "/continuity status"
    Then the status output says the extension is disabled

  @rule-P17
  Scenario: status recomputes the percentages for a new model window
    Given the active model has a context window of 372,000 tokens
    And another model "fake/huge" has a context window of 1,000,000 tokens
    And the native settings are reserveTokens 93,000 and keepRecentTokens 55,800
    When the user switches to the model "fake/huge"
    And the user runs "/continuity status"
    Then the status output shows the model window 1,000,000, reserve 93,000, effective trigger 907,000 at approximately 90.7% and keep recent 55,800 at approximately 5.6%

  @rule-P95m @rule-P97b
  Scenario: status after a checkpoint names the last artifact
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When the user runs "/continuity status"
    Then the status output names the path of the checkpoint Brief

  @rule-P55
  Scenario: status after a committed handoff names the archived Brief
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity status"
    Then the status output names the archived Brief's path

  @rule-P56 @rule-P95n
  Scenario: status after a failed handoff names the failure and the failed postmortem
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity status"
    Then the status output names the failed postmortem's path
    And the status output reports the failure "Internal server error"

  @rule-P56 @rule-P95n
  Scenario: status after a failed checkpoint names the failure and the failed postmortem
    Given the synthesis model fails with an HTTP 500 error
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    And the user runs "/continuity status"
    Then the status output names the failed postmortem's path
    And the status output reports the failure "Internal server error"

  @rule-P95n
  Scenario: status after a refused compaction reports the failure
    Given the extension config file holds {"enabled": false}
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity status"
    Then the status output reports a last failure

  @rule-P89c
  Scenario: disabled native compaction shows no trigger percentage in the footer
    Given native compaction is disabled in the project settings
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model
    And the footer status no longer shows an effective trigger percentage

  @rule-P89c
  Scenario: a keepRecentTokens too large for the window shows no trigger percentage in the footer
    keepRecentTokens 80,000 is not below the window minus reserveTokens (80,000); a window below
    reserveTokens (the model-change scenario) is not the only invalid policy.
    Given the active model has a context window of 100,000 tokens
    And the native settings are reserveTokens 20,000 and keepRecentTokens 80,000
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model
    And the footer status no longer shows an effective trigger percentage

  @needs-fs-faults @rule-P57
  Scenario: status after a failure that left no failed artifact names no artifact
    Given the synthesis model fails with an HTTP 500 error
    And writing the failed postmortem fails
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user runs "/continuity status"
    Then the status output reports the failure "Internal server error"
    And the status output names no artifact file

  @needs-fs-faults @rule-P60
  Scenario: status shows the path of a stale pending Brief
    Given Pi crashes right after the pending Brief is written
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And Pi restarts
    And the user runs "/continuity status"
    Then the status output names the path of every pending Brief of this session

  @rule-P95l
  Scenario: status during a handoff names the current operation
    Given the user runs "/continuity status" while the next Brief is being synthesized
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the status shown during the synthesis names the current operation

  @rule-P60
  Scenario: status shows the path of every stale pending Brief, not only the first
    Given the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    And the user runs "/continuity checkpoint"
    And Pi reloads
    And the user runs "/continuity status"
    Then the status output names the path of every pending Brief of this session

  @rule-P60
  Scenario: a checkpoint saved after a reload leaves the stale Brief in the status
    A new Brief does not make an older pending one less stale: it stays on disk, inert, and the
    status keeps naming it beside the new one.
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When Pi reloads
    And the user runs "/continuity checkpoint"
    And the user runs "/continuity status"
    Then the status output names the path of every pending Brief of this session
