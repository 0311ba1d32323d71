@blitz
Feature: sh-start-transfers-to-a-parent-linked-session
  /sh start requests a transfer. The model retrieves the template, writes the dossier with
  the native write tool and finishes with the returned ID; once the source is idle, Pi
  switches to a fresh session linked to the source, whose short first prompt names the
  dossier's absolute path and the cleanup (reference: Transfer sequence 1-7).

  @rule-H11a @rule-H8 @rule-H12 @rule-H33a @rule-H37a @rule-H37b @rule-H37c @rule-H38 @rule-H39a @rule-H40a @rule-H44a @rule-H64a
  Scenario: sh-start-transfers-to-a-parent-linked-session
    Given the user has worked through 2 turns
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the receiver's first prompt names the dossier's absolute path and nothing of the source history
    And the receiver read the whole dossier
    And the bootstrap prompt tells the receiver to delete exactly the dossier after reading it
    And the dossier is gone after the receiver's completed turn
    And the status widget showed "Waiting for Session Handoff"
    And the status widget showed "Writing Session Handoff"
    And the status widget now shows "Session Handoff Finished"
