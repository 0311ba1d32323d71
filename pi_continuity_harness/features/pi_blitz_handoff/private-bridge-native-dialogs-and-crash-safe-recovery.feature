@blitz
Feature: private-bridge-native-dialogs-and-crash-safe-recovery
  The extension never reads the dossier (metadata only); the cutover bridge is private and
  correlated; the recovery file is replaced atomically with the latest snapshot; over RPC the
  /sh menus and inputs are Pi's native select/input/confirm dialogs, and the Waiting line is
  yellow in the current theme (reference: Transfer sequence 6, Deferral, Public interface,
  Status).

  @needs-fs-faults @rule-H35
  Scenario: the extension never reads the dossier, not at Finish, not at the cutover
    Given the handoff settings are {"deleteHandoffAfterReading": false}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the implementation never read the dossier

  @rule-H33c
  Scenario: an uncorrelated cutover bridge does nothing
    When the user runs "/sh __cutover not-the-token" after the accepted Finish, before the switch, and then "/sh cancel"
    Then exactly 1 Finish call was accepted
    And Pi did not switch sessions

  @rule-H33c
  Scenario: a cutover bridge without a token does nothing
    When the user runs "/sh __cutover" after the accepted Finish, before the switch, and then "/sh cancel"
    Then exactly 1 Finish call was accepted
    And Pi did not switch sessions

  @needs-trace-faults @needs-held-model-calls @rule-H48
  Scenario: a crash while the recovery file is replaced leaves a whole snapshot
    Given Pi crashes right after the second file write in the recovery directory
    And the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "first: run the tests" and then "second: deploy" while the model waits before asking for the template
    Then the recovery file holds a whole snapshot of the deferred prompts, never a partial one

  @needs-trace-faults @rule-H88b
  Scenario: a crash while the settings are saved leaves a whole config file
    Given Pi crashes right after the second write of the handoff config
    When the user sets "readinessRetrySeconds" to "5" and "contextWarningPercent" to "50" in /sh settings, then escapes the "maxSessionChainLength" input and closes the list
    Then the handoff config file is whole and holds "readinessRetrySeconds" = 5

  @rule-H139
  Scenario: over RPC the /sh menus and inputs are Pi's native dialogs
    When the user opens the /sh menu, picks "Settings" and sets "readinessRetrySeconds" to "120"
    Then every /sh menu was Pi's native select dialog and the value was asked in its native input dialog
    And the handoff config file holds "readinessRetrySeconds" = 120

  @rule-H64c
  Scenario: the Waiting line is yellow in the current theme
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the status widget showed "Waiting for Session Handoff"
    And the "Waiting for Session Handoff" line was drawn in the theme's yellow warning colour
