@blitz
Feature: settings-validate-and-persist-atomically
  Each confirmed /sh settings edit validates the whole config, is persisted atomically and
  applies at once; invalid input keeps the prior value and says why; a missing directory
  is created only after the exact path is confirmed (reference: Settings).

  @rule-H88a @rule-H108 @rule-H88b
  Scenario: settings-validate-and-persist-atomically
    When the user sets "readinessRetrySeconds" to "5" in /sh settings
    Then the handoff config file holds "readinessRetrySeconds" = 5

  @rule-H88d @rule-H89 @rule-H95b
  Scenario: invalid input keeps the previous value with a hint
    When the user sets "criticalWarningPercent" to "50" in /sh settings
    Then a notification names "criticalWarningPercent"
    And the handoff config file is unchanged

  @rule-H88a @rule-H91a
  Scenario: a new recovery directory is created after confirming its exact path
    When the user sets "recoveryDirectory" to "$WORK/custom-recovery" in /sh settings
    Then the handoff config file holds "recoveryDirectory" = "$WORK/custom-recovery"
    And the directory "$WORK/custom-recovery" exists
    And a confirmation named "$WORK/custom-recovery"

  @rule-H91a @rule-H91b @rule-H90a
  Scenario: a declined directory creation creates nothing and keeps the previous value
    When the user sets "recoveryDirectory" to "$WORK/custom-recovery" in /sh settings and declines the creation
    Then the directory "$WORK/custom-recovery" does not exist
    And the handoff config file is unchanged
    And a confirmation named "$WORK/custom-recovery"

  @rule-H102b
  Scenario: a relative recovery directory typed in /sh settings is refused, not resolved
    When the user sets "recoveryDirectory" to "relative/recovery" in /sh settings
    Then a notification names "recoveryDirectory"
    And the handoff config file is unchanged

  @rule-H103
  Scenario: a relative template directory typed in /sh settings is refused
    When the user sets "templateDirectory" to "relative/templates" in /sh settings
    Then a notification names "templateDirectory"
    And the handoff config file is unchanged

  @rule-H90a
  Scenario: a directory that cannot be created keeps the previous value with a hint
    Given the project holds a plain file "blocker"
    When the user sets "recoveryDirectory" to "$PROJECT/blocker/recovery" in /sh settings
    Then a notification names "recoveryDirectory"
    And the handoff config file is unchanged

  @rule-H104a
  Scenario: the templates default to call_default.cmpl and handoff_default.cmpl
    When the user opens /sh settings and closes it
    Then the settings dialog showed "call_default.cmpl" and "handoff_default.cmpl"

  @rule-H87b
  Scenario: no settings edit while a handoff is active
    When while the handoff is written the user sets "readinessRetrySeconds" to "5" in /sh settings
    Then the handoff config file is unchanged
    And the status widget now shows "Writing Session Handoff"

  @rule-H134
  Scenario: a config file the extension creates is owner-only
    When the user sets "readinessRetrySeconds" to "5" in /sh settings
    Then the handoff config file holds "readinessRetrySeconds" = 5
    And the handoff config file is owner-only

  @rule-H88c
  Scenario: a confirmed edit applies at once, without a reload
    When the user sets "deleteHandoffAfterReading" to "false" in /sh settings
    And the user runs "/sh start" and the model writes the handoff and finishes it
    Then the bootstrap prompt tells the receiver to leave the dossier unchanged

  @rule-H133
  Scenario: answers to /sh dialogs never reach the model
    When the user sets "recoveryDirectory" to "$WORK/custom-recovery" in /sh settings
    And the user asks "What should I do next?" and the model answers
    Then the handoff config file holds "recoveryDirectory" = "$WORK/custom-recovery"
    And no model request contained "custom-recovery"

  @rule-H92
  Scenario: no draft: Escape drops only the unconfirmed input, closing keeps the saved edits
    When the user sets "readinessRetrySeconds" to "5" and "contextWarningPercent" to "50" in /sh settings, then escapes the "maxSessionChainLength" input and closes the list
    Then the handoff config file holds "readinessRetrySeconds" = 5
    And the handoff config file holds "contextWarningPercent" = 50

  @rule-H92
  Scenario: Escape on a true/false choice saves nothing for it
    When the user sets "readinessRetrySeconds" to "5" in /sh settings, then escapes the "deleteHandoffAfterReading" choice and closes the list
    Then the handoff config file holds "readinessRetrySeconds" = 5
    And the handoff config file holds "deleteHandoffAfterReading" = true

  @rule-H93
  Scenario: the template list holds the role's readable nonempty templates and a manual entry
    Given the managed template "call_team.cmpl" says "Team call template."
    And the managed template "handoff_team.cmpl" says "Team handoff template."
    And the managed template "call_empty.cmpl" is empty
    When the user opens the "callTemplate" list of /sh settings and leaves it
    Then the settings template list offered "call_team.cmpl" and "Enter another filename" but neither "handoff_team.cmpl" nor "call_empty.cmpl"

  @rule-H93
  Scenario: the template list also offers the addendum's templates
    Given the addendum template "call_addendum.cmpl" says "Addendum call template."
    And the addendum template "handoff_addendum.cmpl" says "Addendum handoff template."
    And the handoff settings are {"templateDirectory": "$PROJECT/addendum"}
    When the user opens the "callTemplate" list of /sh settings and leaves it
    Then the settings template list offered "call_addendum.cmpl" and "Enter another filename" but neither "handoff_addendum.cmpl" nor "call_empty.cmpl"

  @needs-trace-faults @rule-H90b
  Scenario: a settings edit that cannot be saved keeps the previous value in force
    Given writing the handoff config fails
    When the user sets "contextWarningPercent" to "50" in /sh settings
    Then a notification names "config.json"
    And the handoff config file is unchanged
    When the model checks the handoff status
    Then the status tool reported the warning threshold of 60%

  @rule-H94b @rule-H99b @rule-H100b @rule-H101b
  Scenario Outline: a value just outside its range is refused and the file is left as it was
    When the user sets "<key>" to "<value>" in /sh settings
    Then a notification names "<key>"
    And the handoff config file is unchanged

    Examples:
      | key                            | value |
      | contextWarningPercent          | 90    |
      | automaticSessionHandoffPercent | 100.5 |
      | readinessRetrySeconds          | 0     |
      | readinessRetrySeconds          | 301   |
      | maxSessionChainLength          | 0     |
      | contextWarningPercent          | 0.5   |
      | automaticSessionHandoffPercent | -1    |
      | readinessRetrySeconds          | 2.5   |

  @rule-H94b @rule-H95b @rule-H99b @rule-H100b @rule-H101b
  Scenario Outline: a value at the edge of its range is accepted and saved
    When the user sets "<key>" to "<value>" in /sh settings
    Then the handoff config file holds "<key>" = <value>

    Examples:
      | key                            | value |
      | contextWarningPercent          | 1     |
      | criticalWarningPercent         | 100   |
      | automaticSessionHandoffPercent | 100   |
      | readinessRetrySeconds          | 300   |
      | maxSessionChainLength          | 1     |
      | contextWarningPercent          | 62.5  |
      | automaticSessionHandoffPercent | 0     |
