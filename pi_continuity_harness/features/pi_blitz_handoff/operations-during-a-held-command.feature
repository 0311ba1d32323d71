@blitz
Feature: operations-during-a-held-command
  Operations that arrive while a command is still running: a start or a late template request
  while a cancellation cleanup waits for the turn to settle (reference: Protection, "late
  callbacks cannot revive work"; Cutover; Transfer sequences 4 and 7).

  @needs-held-model-calls @rule-H79
  Scenario: a start during a held cancel is refused and the late template request revives nothing
    When the user cancels the handoff while the model's reply asking for the template is held, and runs "/sh start" while the cancel waits for the turn
    Then the start during the cleanup was refused: the Call instruction was sent once
    And the template request was refused and nothing was reserved
    And the status widget no longer shows an active handoff

  @needs-held-model-calls @rule-H63
  Scenario: once the native switch is invoked /sh cancel changes nothing and the switch completes
    Given another extension asks the model before every session switch
    When the user runs "/sh cancel" while the native switch to the receiver is in progress
    Then the cancel ran while the switch was in progress
    And Pi switched to a new session whose header links to the source session
    And the receiver read the whole dossier
