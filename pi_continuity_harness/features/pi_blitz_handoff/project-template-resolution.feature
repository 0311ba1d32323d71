@blitz
Feature: project-template-resolution
  /sh project-template assigns a Call or Handoff template to the current directory at once;
  each start rereads the assignments and uses the nearest concrete selection upward, else
  the global setting (reference: Managed paths, templates and projects).

  @rule-H125 @rule-H127a @rule-H18a @rule-H108 @rule-H132
  Scenario: project-template-resolution
    Given the managed template "call_team.cmpl" says "Team call template."
    When the user selects "call_team.cmpl" as the Call template of this directory
    Then the project templates file assigns "call_team.cmpl" to the call role of this directory
    And the project templates file assigns nothing to the handoff role of this directory
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Team call template."
    And the Call instruction tells the model to call session_handoff_get_template({}) before writing, and names neither the dossier file nor a Finish ID

  @rule-H127a
  Scenario: a selection made after a start is used by the next start
    Given the managed template "call_team.cmpl" says "Team call template."
    When the model asks for the template and the user cancels the handoff
    And the user selects "call_team.cmpl" as the Call template of this directory
    And the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Team call template."

  @needs-trace-faults @rule-H125
  Scenario: a project template choice that cannot be saved says so
    Given writing the project templates file fails
    And the managed template "call_team.cmpl" says "Team call template."
    When the user selects "call_team.cmpl" as the Call template of this directory
    Then a warning or error notification names "project-templates.json"
