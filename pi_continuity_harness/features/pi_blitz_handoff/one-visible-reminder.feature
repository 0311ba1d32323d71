@blitz
Feature: one-visible-reminder
  readinessRetrySeconds after the request was dispatched without a Finish, one visible
  reminder asks the model to complete the current template/Finish flow; no regenerated
  IDs or files, no polling, never a second reminder (reference: Deferral, reminder).

  @needs-virtual-time @rule-H49a
  Scenario: one-visible-reminder
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When the model takes 2 seconds before asking for the template, then writes and finishes
    Then exactly 1 handoff reminder was shown
    And Pi switched to a new session whose header links to the source session

  @rule-H49b @rule-H100a
  Scenario: a quick handoff gets no reminder
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then exactly 0 handoff reminders were shown
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H100a @rule-H49b
  Scenario: with the default delay a writer that stops after 30 seconds gets no reminder
    When the model takes 30 seconds before asking for the template, then writes and finishes
    Then exactly 0 handoff reminders were shown
    And the status widget now shows "Waiting for Session Handoff"

  @needs-virtual-time @rule-H17
  Scenario: an early template request starts the reminder clock
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When the model is asked to start a handoff, asks for the template at once, then takes 2 seconds before it writes and finishes
    Then exactly 1 handoff reminder was shown
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H17
  Scenario: a request that waited before its early template request is not reminded before the delay after it
    Given the handoff settings are {"readinessRetrySeconds": 2}
    When the model is asked to start a handoff, takes 3 seconds before it asks for the template, then writes and finishes at once
    Then exactly 0 handoff reminders were shown
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H49c
  Scenario: after the reminder the Finish ID the template request returned is still accepted
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When the model asks for the template, takes 2 seconds before writing, then writes and finishes
    Then exactly 1 handoff reminder was shown
    And exactly 1 Finish call was accepted
    And the source model was asked nothing after the accepted Finish but the writer's last reply
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H49a
  Scenario: a repeated GET does not restart the reminder clock
    Given the handoff settings are {"readinessRetrySeconds": 3}
    When the model asks for the template, again after 2 seconds, then writes after 2 more seconds and finishes
    Then exactly 1 handoff reminder was shown
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H49a
  Scenario: a second request in the session gets its own reminder
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When a first request is reminded after 2 seconds and cancelled
    And the model takes 2 seconds before asking for the template, then writes and finishes
    Then each of the two requests got exactly one reminder
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H49a
  Scenario: no reminder after the Finish was accepted
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When the model writes the handoff, finishes it and takes 2 seconds over its last reply
    Then exactly 0 handoff reminders were shown
    And Pi switched to a new session whose header links to the source session
