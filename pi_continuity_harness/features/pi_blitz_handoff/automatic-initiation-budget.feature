@blitz
Feature: automatic-initiation-budget
  Automatic initiation is off by default. Enabled, the first completed turn at the
  automatic threshold inserts the request as steering; a failed or cancelled first attempt
  leaves one final attempt at the critical level and none after it; the budget survives a
  reload and a successful compaction resets it (reference: Deferral, automatic).

  Background:
    Given the native settings are reserveTokens 10,000 and keepRecentTokens 2,000

  @rule-H54 @rule-H11c
  Scenario: automatic initiation is off by default
    When the next turn reports 150,000 context tokens
    Then no automatic handoff request was made
    When the user runs "/sh start"
    Then the status widget now shows "Waiting for Session Handoff"

  @rule-H56a @rule-H58 @rule-H59 @rule-H60a @rule-H95a @rule-H99a
  Scenario: automatic-initiation-budget
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And Pi reloads
    And the next turn reports 146,000 context tokens
    Then no automatic handoff request was made
    When the next turn reports 182,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And the next turn reports 184,000 context tokens
    Then no automatic handoff request was made
    When the user compacts the session manually
    And the next turn reports 145,000 context tokens
    Then one automatic handoff request was made

  @rule-H58 @rule-H95a
  Scenario: the final automatic attempt comes at the configured critical level
    With criticalWarningPercent 80 the final attempt comes at 82.5 %, well before the default 90 %.
    Given the handoff settings are {"automaticSessionHandoff": true, "contextWarningPercent": 50, "criticalWarningPercent": 80}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And the next turn reports 165,000 context tokens
    Then one automatic handoff request was made

  @rule-H59 @rule-H60a
  Scenario: a reload restores the budget as last spent, and a compaction's reset as well
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And the next turn reports 182,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And Pi reloads
    And the next turn reports 184,000 context tokens
    Then no automatic handoff request was made
    When the user compacts the session manually
    And Pi reloads
    And the next turn reports 145,000 context tokens
    Then one automatic handoff request was made

  @rule-H56a
  Scenario: a turn exactly at the automatic threshold initiates, and one exactly at the critical level tries again
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 140,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And the next turn reports 180,000 context tokens
    Then one automatic handoff request was made

  @rule-H61
  Scenario: a failed compaction keeps the automatic budget
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And the user compacts the session manually and the compaction fails
    And the next turn reports 146,000 context tokens
    Then no automatic handoff request was made
    When the next turn reports 182,000 context tokens
    Then one automatic handoff request was made

  @rule-H62
  Scenario: an automatic request uses the selected Call template, like a command
    Given the managed template "call_team.cmpl" says "Team call template."
    And the handoff settings are {"automaticSessionHandoff": true, "callTemplate": "call_team.cmpl"}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    And the handoff request the model received starts with "Team call template."

  @rule-H62
  Scenario: an automatic request defers prompts from the template request, like a command
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    And the status widget showed "Waiting for Session Handoff"
    And the status widget never showed "Inputs deferred"

  @rule-H55
  Scenario: a zero automatic threshold disables automatic initiation
    Given the handoff settings are {"automaticSessionHandoff": true, "automaticSessionHandoffPercent": 0}
    When the next turn reports 150,000 context tokens
    Then no automatic handoff request was made
    When the user runs "/sh start"
    Then the status widget now shows "Waiting for Session Handoff"

  @rule-H15 @rule-H56b
  Scenario: the automatic request is steering at the completed turn, after its tool results
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the model calls a tool and reports 145,000 context tokens, then answers
    Then the Call instruction reached the model right after that turn's tool results, before its final answer
    And the tool's result of that turn was recorded
    And no run was aborted

  @rule-H60b
  Scenario: a successful threshold compaction resets the automatic budget too
    Given the handoff settings are {"automaticSessionHandoff": true, "criticalWarningPercent": 100}
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made
    When the user runs "/sh cancel"
    And native compaction reaches its threshold
    And the next turn reports 145,000 context tokens
    Then one automatic handoff request was made

  @rule-H57
  Scenario Outline: a turn that <ends> neither initiates nor spends the automatic budget
    Given the handoff settings are {"automaticSessionHandoff": true}
    When the next turn reports 120,000 context tokens
    And the user sends a prompt of 120,000 characters and the turn <ends>
    Then no automatic handoff request was made
    And no handoff was started
    When the next turn reports 145,000 context tokens
    Then one automatic handoff request was made

    Examples:
      | ends                          |
      | fails with a provider error   |
      | is aborted                    |
