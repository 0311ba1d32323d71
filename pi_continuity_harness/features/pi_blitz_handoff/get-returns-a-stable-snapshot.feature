@blitz
Feature: get-returns-a-stable-snapshot
  session_handoff_get_template returns the selected template, the exact reserved file, the
  source transcript locator and a fresh Finish ID (not the session ID); a repeated GET of
  the active request returns the same snapshot (reference: Transfer sequence 3).

  @rule-H19b @rule-H19d @rule-H20 @rule-H112 @rule-H64a @rule-H135 @smoke
  Scenario: get-returns-a-stable-snapshot
    When the model asks for the template twice and then stops
    Then every model request offered the tools session_handoff_get_template, session_handoff_finish and blitz_handoff, and one write tool
    And both template responses name the same dossier file and the same Finish ID
    And the dossier file is reserved, empty and owner-only
    And Pi did not switch sessions
    And the status widget now shows "Writing Session Handoff"

  @rule-H112
  Scenario: the dossier is named after the native session id
    Given the session id is "blitz_run.7"
    When the model asks for the template twice and then stops
    Then both template responses name the same dossier file and the same Finish ID
    And the dossier file is reserved, empty and owner-only

  @needs-held-model-calls @rule-H20
  Scenario: a repeated GET returns the snapshot, not the edited file
    Given the managed template "handoff_team.cmpl" says "Team handoff, first wording."
    And the handoff settings are {"handoffTemplate": "handoff_team.cmpl"}
    When the model asks for the template, the managed template "handoff_team.cmpl" is changed to say "Team handoff, second wording.", and the model asks for the template again and stops
    Then both template responses name the same dossier file and the same Finish ID
    And no model request contained "second wording"

  @rule-H22 @rule-H27a @rule-H68a
  Scenario: a prompt sent while the handoff is being written is captured, not answered
    When the model asks for the template once and then stops
    And the user sends "what is the status of the build?"
    Then the prompt was handled by the extension and never reached the model
    And the status widget now shows "Inputs deferred (1)"

  @needs-held-model-calls @rule-H26
  Scenario: a template request that completes after the cancel reserves nothing
    When the user cancels the handoff while the model's reply asking for the template is held
    Then the template request was refused and nothing was reserved
    And the status widget no longer shows an active handoff
