@blitz
Feature: template-resolver-falls-back-visibly
  One nonrecursive resolver per role: the selected name in the addendum directory, the selected
  managed template, the addendum role default, the managed role default. A failed non-default
  selection warns with the failure and the fallback actually used; a role default that does not
  resolve fails the start visibly; startup and opening /sh settings check both roles
  (reference: Managed paths, templates and projects).

  @rule-H129
  Scenario: the selected addendum template comes before the managed one of the same name
    Given the managed template "call_team.cmpl" says "Managed team call."
    And the addendum template "call_team.cmpl" says "Addendum team call."
    And the handoff settings are {"templateDirectory": "$PROJECT/addendum", "callTemplate": "call_team.cmpl"}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Addendum team call."

  @rule-H129
  Scenario: the managed selection comes before the addendum default
    Given the managed template "call_team.cmpl" says "Managed team call."
    And the addendum template "call_default.cmpl" says "Addendum default call."
    And the handoff settings are {"templateDirectory": "$PROJECT/addendum", "callTemplate": "call_team.cmpl"}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Managed team call."

  @rule-H129
  Scenario: the fallback warning names every candidate that failed
    Given the addendum template "call_other.cmpl" says "Another addendum call."
    And the handoff settings are {"templateDirectory": "$PROJECT/addendum", "callTemplate": "call_missing.cmpl"}
    When the model asks for the template once and then stops
    Then the start warned naming "addendum/call_missing.cmpl" and "templates/call_missing.cmpl"

  @rule-H130a
  Scenario: a selected template that cannot be used warns with the fallback used
    Given the handoff settings are {"callTemplate": "call_missing.cmpl"}
    When the model asks for the template once and then stops
    Then the start warned naming "call_missing.cmpl" and "call_default.cmpl"
    And the handoff request the model received starts with the managed template "call_default.cmpl"

  @rule-H130b
  Scenario: a selected role default found after the addendum directory gives no warning
    Given the addendum template "call_team.cmpl" says "Addendum team call."
    And the handoff settings are {"templateDirectory": "$PROJECT/addendum"}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then no notification mentions "call_default.cmpl"
    And the handoff request the model received starts with the managed template "call_default.cmpl"

  @rule-H130b
  Scenario: a role default that cannot be resolved fails the start visibly
    Given the managed template "call_default.cmpl" is removed
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the start was refused with a notification naming "call_default.cmpl"
    And no handoff was started

  @rule-H131
  Scenario: startup and /sh settings report a selected template that cannot be used
    Given the handoff settings are {"handoffTemplate": "handoff_missing.cmpl"}
    When the user opens /sh settings and closes it
    Then Pi's startup warned naming "handoff_missing.cmpl"
    And a notification names "handoff_missing.cmpl"
