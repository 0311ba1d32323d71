@blitz
Feature: operations-while-a-command-is-held
  What arrives while a command or a request is still running: a start, a late template
  request or a tree navigation while a cancellation cleanup waits for the turn to settle, a start
  while the /sh settings menu is open, /sh cancel while the native
  switch is in progress, the sender's settlement after the receiver's bootstrap turn, and a
  deferral mode saved between requests (reference: Protection, "late callbacks cannot revive
  work"; Cutover; Transfer sequences 4 and 7).

  @needs-held-model-calls @rule-H79
  Scenario: a start during a held cancel is refused and the late template request revives nothing
    When the user cancels the handoff while the model's reply asking for the template is held, and runs "/sh start" while the cancel waits for the turn
    Then the start during the cleanup was refused: the Call instruction was sent once
    And the template request was refused and nothing was reserved
    And the status widget no longer shows an active handoff

  @needs-held-dialogs @rule-H87c
  Scenario: /sh start while the /sh settings menu is open is refused and nothing reaches the model
    When the user runs "/sh start" while the /sh settings menu is open, then closes the menu
    Then the start ran while the settings menu was open
    And the start was refused with a notification naming "settings"
    And no handoff was requested
    And no handoff was started
    And the handoff config file is unchanged

  @needs-held-model-calls @rule-H63
  Scenario: once the native switch is invoked /sh cancel changes nothing and the switch completes
    Given another extension asks the model before every session switch
    When the user runs "/sh cancel" while the native switch to the receiver is in progress
    Then the cancel ran while the switch was in progress
    And Pi switched to a new session whose header links to the source session
    And the receiver read the whole dossier

  @needs-held-model-calls @rule-H78
  Scenario: tree navigation during a held cancellation cleanup is cancelled
    Given another extension asks the model whenever the agent settles
    When the user cancels the handoff while the model's reply to the Call instruction is held, and navigates the session tree while the other extension's settlement call is held
    Then the tree navigation during the cleanup was cancelled and the leaf did not move

  @rule-H43
  Scenario: the sender's late settlement does not overwrite the receiver's failed bootstrap turn
    When the user runs "/sh start", the model writes the handoff and finishes it, and the receiver's bootstrap turn fails with a provider error
    Then Pi switched to a new session whose header links to the source session
    And the bootstrap turn's failure is the last handoff outcome reported

  @needs-held-model-calls @rule-H24
  Scenario: a deferral mode saved between requests applies to the next request
    When the user sets "deferPromptsFrom" to "Request" in /sh settings
    And the user sends "please also check the logs" while the model waits before asking for the template
    Then the deferred prompts never reached the source model
    And the status widget showed "Inputs deferred (1)"

  @rule-H77b
  Scenario: a fork is blocked while the handoff is written
    When the user forks the session while the handoff is written
    Then Pi did not switch sessions
    And the status widget now shows "Writing Session Handoff"
