@blitz
Feature: model-start-is-one-of-three-routes
  The model may start a handoff with blitz_handoff start on the user's explicit request; an
  early successful GET carries the still-pending Call instruction once, with no extra model
  round and no later repeat (reference: Public interface, Transfer sequence 1).

  Scenario: model-start-is-one-of-three-routes
    When the model is asked to start a handoff and asks for the template at once
    Then the template response carries the Call instruction exactly once
    And Pi switched to a new session whose header links to the source session

  Scenario: an early template response is the only Call instruction
    When the model is asked to start a handoff, asks for the template at once and stops
    Then the template response carries the Call instruction exactly once
    And Pi did not switch sessions

  Scenario: the status tool reports thresholds and state
    When the model checks the handoff status
    Then the status tool reported "Warning threshold: 60%"
    And the status tool reported "Status: idle"

  Scenario: opening the menu does not initiate
    When the user opens the /sh menu and dismisses it
    Then no handoff was requested
