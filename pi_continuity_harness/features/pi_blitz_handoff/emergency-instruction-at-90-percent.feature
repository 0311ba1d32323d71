@blitz
Feature: emergency-instruction-at-90-percent
  With a requested, unsubmitted handoff, the first completed turn at or above 90% of the
  context window gets one fixed steering instruction: stop source work, fetch the template
  if missing, finalise the file, Finish (reference: Deferral, reminder and emergency).

  Background:
    Given the native settings are reserveTokens 10,000 and keepRecentTokens 2,000

  @rule-H50
  Scenario: emergency-instruction-at-90-percent
    When a handoff is requested and the model's next reply reports 182,000 context tokens
    Then the emergency instruction was sent once
    And exactly 0 handoff reminders were shown
    And Pi switched to a new session whose header links to the source session

  @rule-H50
  Scenario: below 90% there is no emergency
    When a handoff is requested and the model's next reply reports 150,000 context tokens
    Then the emergency instruction was not sent
    And the status widget now shows "Waiting for Session Handoff"

  @rule-H52c @rule-H11c
  Scenario: without a request there is no emergency
    When the next turn reports 185,000 context tokens
    Then the emergency instruction was not sent
    And the extension sent the model no message
    When the user runs "/sh start"
    Then the status widget now shows "Waiting for Session Handoff"

  @rule-H53
  Scenario: a lower critical warning level does not bring the emergency forward
    Given the handoff settings are {"contextWarningPercent": 50, "criticalWarningPercent": 75}
    When a handoff is requested and the model's next reply reports 165,000 context tokens
    Then the emergency instruction was not sent
    And the extension sent the model nothing but the Call instruction
    And the status widget now shows "Waiting for Session Handoff"

  @rule-H53
  Scenario: a critical warning level of 100% does not delay the emergency
    Given the handoff settings are {"criticalWarningPercent": 100, "automaticSessionHandoffPercent": 95}
    When a handoff is requested and the model's next reply reports 182,000 context tokens
    Then the emergency instruction was sent once
    And Pi switched to a new session whose header links to the source session

  @rule-H52a
  Scenario: a finished handoff is not escalated
    When the user runs "/sh start" and the model finishes with 182,000 context tokens
    Then the emergency instruction was not sent
    And Pi switched to a new session whose header links to the source session

  @rule-H52b
  Scenario: a cancelled handoff is not escalated
    When the model asks for the template and the user cancels the handoff
    And the next turn reports 185,000 context tokens
    Then the emergency instruction was not sent
    And the owned dossier reservation was removed

  @rule-H50 @rule-H53
  Scenario: a turn at exactly 90% is at the emergency level
    When a handoff is requested and the model's next reply reports 180,000 context tokens
    Then the emergency instruction was sent once

  @rule-H51
  Scenario: the emergency keeps the Finish ID the template response gave
    When a handoff is requested, the model asks for the template and its next reply reports 182,000 context tokens
    Then the emergency instruction was sent once
    And exactly 1 Finish call was accepted
    And Pi switched to a new session whose header links to the source session

  @needs-virtual-time @rule-H51 @rule-H137
  Scenario: the emergency replaces the due reminder, keeps the request and aborts nothing
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When a handoff is requested and the model's next reply takes 2 seconds and reports 182,000 context tokens
    Then the emergency instruction was sent once
    And exactly 0 handoff reminders were shown
    And no run was aborted
    And Pi switched to a new session whose header links to the source session

  @rule-H105b
  Scenario: the critical warning comes again at the next settled turn
    When the next turn reports 185,000 context tokens
    Then a notification was shown
    When the next turn reports 186,000 context tokens
    Then a notification was shown

  @rule-H50
  Scenario: a second request in the session gets its own emergency
    When a first request is escalated by a reply of 182,000 context tokens and cancelled
    And a handoff is requested and the model's next reply reports 182,000 context tokens
    Then each of the two requests got the emergency instruction once
    And Pi switched to a new session whose header links to the source session

  @rule-H50
  Scenario: after a tool turn at 90% the emergency steers the next call
    When a handoff is requested and the model's next turn runs a tool at 182,000 context tokens
    Then the emergency instruction reached the model right after that turn's tool results
    And Pi switched to a new session whose header links to the source session
