@blitz
Feature: dossier-retained-when-deletion-is-off
  With deleteHandoffAfterReading false the receiver is told to leave the exact file
  unchanged: same path, same content, no archive (reference: Managed paths).

  @rule-H40b @rule-H37b @rule-H44a @smoke
  Scenario: dossier-retained-when-deletion-is-off
    Given the handoff settings are {"deleteHandoffAfterReading": false}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the bootstrap prompt tells the receiver to leave the dossier unchanged
    And the dossier is still there, unchanged
