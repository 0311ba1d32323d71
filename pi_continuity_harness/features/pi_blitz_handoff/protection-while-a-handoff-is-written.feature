@blitz
Feature: protection-while-a-handoff-is-written
  From the deferral boundary until completion or cancel, a user session switch and a compaction
  are blocked; after a reload no handoff state is restored, and a partial dossier is left in
  place (reference: Status, cancellation and recovery; Protection).

  @rule-H77c
  Scenario: a compaction is blocked while the handoff is written
    Given the native settings are reserveTokens 10,000 and keepRecentTokens 2,000
    When the user compacts the session while the handoff is written
    Then the compaction was blocked
    And the status widget now shows "Writing Session Handoff"

  @rule-H77a
  Scenario: a new session is blocked while the handoff is written
    When the user starts a new session while the handoff is written
    Then Pi did not switch sessions
    And the status widget now shows "Writing Session Handoff"

  @rule-H77a
  Scenario: resuming another session is blocked while the handoff is written
    Pi asks `session_before_switch` with reason `resume` when the user resumes another session
    (`/resume`, RPC `switch_session`): a switch like a new session, and blocked the same way.
    When the user resumes the session before the source while the handoff is written
    Then Pi did not resume another session
    And the status widget now shows "Writing Session Handoff"

  @rule-H77a @rule-H23
  Scenario: deferral from Request blocks a new session before the GET
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user starts a new session before the model asks for the template
    Then Pi did not switch sessions
    And the status widget now shows "Waiting for Session Handoff"

  @rule-H80a @rule-H80b
  Scenario: after a reload no request is active and the partial dossier stays
    When the model asks for the template once and then stops
    And Pi reloads
    And the model asks for the template without a handoff request
    Then the last template request was refused
    And the reserved dossier is still there

  @rule-H105a
  Scenario: the context warning is shown once per runtime
    When the next turn reports 125,000 context tokens
    Then a notification was shown
    When the next turn reports 126,000 context tokens
    Then no notification was shown

  @rule-H105a @rule-H94a
  Scenario: a turn at exactly the warning threshold shows the context warning
    The warning comes at or above contextWarningPercent: 120,000 of 200,000 tokens is 60 %.
    Given the native settings are reserveTokens 10,000 and keepRecentTokens 2,000
    When the next turn reports 120,000 context tokens
    Then a notification names "Context use is 60%"

  @rule-H77e
  Scenario: before the template is retrieved a new session may discard the request
    When the user starts a new session before the model asks for the template
    Then the status widget showed "Waiting for Session Handoff"
    And Pi switched away from the source session

  @rule-H77d
  Scenario: a Finish awaiting the switch is protected too
    When the user starts a new session after the accepted Finish, before the switch
    Then a notification was shown
    And Pi switched to a new session whose header links to the source session
