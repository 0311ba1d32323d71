@blitz
Feature: in-memory-sessions-are-refused
  A source session without a session file (--no-session, in memory) has no transcript path and
  no native parent lineage: every start is refused, nothing is reserved or sent (reference:
  Requirements).

  Background:
    Given Pi runs without a session file

  @rule-H1a
  Scenario: in-memory-sessions-are-refused
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the start was refused with a notification
    And no handoff was started

  @rule-H1b
  Scenario: a model start in an in-memory session is refused
    When the model is asked to start a handoff and asks for the template at once
    Then the model's start was refused
    And no handoff was started

  @rule-H1b
  Scenario: automatic initiation in an in-memory session is refused
    Given the native settings are reserveTokens 10,000 and keepRecentTokens 2,000
    And the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 145,000 context tokens
    Then the start was refused with a notification
    And no automatic handoff request was made
