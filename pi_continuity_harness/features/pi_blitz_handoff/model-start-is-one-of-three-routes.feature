@blitz
Feature: model-start-is-one-of-three-routes
  The model may start a handoff with blitz_handoff start on the user's explicit request; an
  early successful GET carries the still-pending Call instruction once, with no extra model
  round and no later repeat (reference: Public interface, Transfer sequence 1).

  Background:
    Given the managed template "call_marker.cmpl" says "CALL-MARKER: hand off at the next safe checkpoint."
    And the handoff settings are {"callTemplate": "call_marker.cmpl"}

  @rule-H11b @rule-H16 @rule-H12 @smoke
  Scenario: model-start-is-one-of-three-routes
    When the model is asked to start a handoff and asks for the template at once
    Then the template response carries "CALL-MARKER" exactly once and no message to the model does
    And Pi switched to a new session whose header links to the source session

  @rule-H16 @rule-H32
  Scenario: an early template response is the only Call instruction
    When the model is asked to start a handoff, asks for the template at once and stops
    Then the template response carries "CALL-MARKER" exactly once and no message to the model does
    And Pi did not switch sessions

  @rule-H16
  Scenario: a second template request after an early one does not carry the Call again
    When the model is asked to start a handoff, asks for the template twice and stops
    Then the template response carries "CALL-MARKER" exactly once and no message to the model does
    And the model received 2 template responses

  @rule-H9a @rule-H94a @rule-H135
  Scenario: the status tool reports thresholds and state
    When the model checks the handoff status
    Then the status tool reported the warning threshold of 60%

  @rule-H5
  Scenario: opening the menu does not initiate
    When the user opens the /sh menu and dismisses it
    Then a menu was offered
    And no handoff was requested

  @rule-H9b @rule-H9c
  Scenario: the status tool reports the context use, the thresholds, the reminder delay and the state
    Given the handoff settings are {"callTemplate": "call_marker.cmpl", "automaticSessionHandoff": true, "automaticSessionHandoffPercent": 75}
    When the model checks the handoff status while the handoff waits and while it is written
    Then the status tool reported the context use, the automatic threshold of 75% and a reminder delay of 60 seconds
    And the two status answers report different handoff states

  @rule-H9c
  Scenario: the status tool reports the configured reminder delay, not the default
    Given the handoff settings are {"callTemplate": "call_marker.cmpl", "automaticSessionHandoff": true, "automaticSessionHandoffPercent": 75, "readinessRetrySeconds": 45}
    When the model checks the handoff status while the handoff waits and while it is written
    Then the status tool reported the context use, the automatic threshold of 75% and a reminder delay of 45 seconds

  @rule-H11c
  Scenario: a prompt that only mentions a handoff starts nothing
    When the user asks "Should we hand this session off, do you think?" and the model answers
    Then no handoff was started
    When the user runs "/sh start"
    Then the status widget now shows "Waiting for Session Handoff"

  @rule-H14b
  Scenario: a model start without an early template request sends the Call once the run settled
    When the model is asked to start a handoff and ends its turn
    Then the Call instruction reached the model only after that run settled
    And the status widget now shows "Waiting for Session Handoff"

  @rule-H21
  Scenario: a template request without a handoff is refused
    When the model asks for the template without a handoff request
    Then the template request was refused and nothing was reserved
    And no handoff was started

  @rule-H10
  Scenario: the model is told to start a handoff only on an explicit user request
    When the user asks "what is next?" and the model answers
    Then every blitz_handoff declaration the model received offers start only on an explicit user request
