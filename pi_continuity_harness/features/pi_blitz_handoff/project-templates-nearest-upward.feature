@blitz
Feature: project-templates-nearest-upward
  Each start rereads project-templates.json and looks each role up from the cwd upward, never in
  descendants: the nearest concrete selection wins, <Default> selects the role default and stops
  the lookup. An unusable file gives one warning and the role defaults, and is never rewritten.
  /sh project-template shows a Call and a Handoff box; both roles on <Autodiscover> remove the
  directory's exact assignment (reference: Managed paths, templates and projects).

  @rule-H127b
  Scenario: the nearest selection upward wins and a descendant's is never used
    Given the managed template "call_parent.cmpl" says "Parent directory call."
    And the managed template "call_child.cmpl" says "Child directory call."
    And the project templates file holds {"projects": {"$WORK": {"call": "call_parent.cmpl"}, "$PROJECT/sub": {"call": "call_child.cmpl"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Parent directory call."

  @rule-H127b
  Scenario: a selection made only for a descendant directory is never used
    Given the managed template "call_child.cmpl" says "Child directory call."
    And the project templates file holds {"projects": {"$PROJECT/sub": {"call": "call_child.cmpl"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with the managed template "call_default.cmpl"
    And no model request contained "Child directory call."

  @rule-H127b
  Scenario: a directory whose path only begins like the cwd's is not its ancestor
    Given the managed template "call_other.cmpl" says "Other directory call."
    And the project templates file holds {"projects": {"$WORK/proj": {"call": "call_other.cmpl"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with the managed template "call_default.cmpl"
    And no model request contained "Other directory call."

  @rule-H127b
  Scenario: a role the cwd does not assign is looked up further up
    Given the managed template "call_parent.cmpl" says "Parent directory call."
    And the managed template "handoff_here.cmpl" says "Handoff template of this directory."
    And the project templates file holds {"projects": {"$WORK": {"call": "call_parent.cmpl"}, "$PROJECT": {"handoff": "handoff_here.cmpl"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Parent directory call."
    And the template response carries "Handoff template of this directory." and names the source session file

  @rule-H127b
  Scenario: the nearest of two upward selections wins
    Given the managed template "call_parent.cmpl" says "Parent directory call."
    And the managed template "call_here.cmpl" says "Call template of this directory."
    And the project templates file holds {"projects": {"$WORK": {"call": "call_parent.cmpl"}, "$PROJECT": {"call": "call_here.cmpl"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with "Call template of this directory."
    And no model request contained "Parent directory call."

  @rule-H116
  Scenario: <Default> in the cwd stops the lookup at the role default
    Given the managed template "call_parent.cmpl" says "Parent directory call."
    And the project templates file holds {"projects": {"$WORK": {"call": "call_parent.cmpl"}, "$PROJECT": {"call": "<Default>"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff request the model received starts with the managed template "call_default.cmpl"
    And no model request contained "Parent directory call."

  @rule-H128
  Scenario: an unreadable project templates file warns once, uses the defaults and stays as it is
    Given the project templates file holds the text "{not json"
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then exactly one notification names "project-templates.json"
    And the handoff request the model received starts with the managed template "call_default.cmpl"
    And the project templates file is unchanged

  @rule-H128
  Scenario: a project templates file of an invalid shape warns once, uses the defaults and stays as it is
    The file is valid JSON, but a directory key must be absolute.
    Given the project templates file holds {"projects": {"relative/dir": {"call": "call_default.cmpl"}}}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then exactly one notification names "project-templates.json"
    And the handoff request the model received starts with the managed template "call_default.cmpl"
    And the project templates file is unchanged

  @rule-H126
  Scenario: both roles on Autodiscover remove the directory's assignment; nothing to remove writes nothing
    Given the managed template "call_team.cmpl" says "Team call template."
    And the project templates file holds {"projects": {"$PROJECT": {"call": "call_team.cmpl"}, "$WORK": {"handoff": "<Default>"}}}
    When the user selects "<Autodiscover>" as the Call template of this directory
    Then the project templates file has no entry for this directory, and keeps the others
    Given the project templates file holds {"projects": {"$WORK": {"handoff": "<Default>"}}}
    When the user selects "<Autodiscover>" as the Call template of this directory
    Then the project templates file is unchanged
    And a notification was shown

  @rule-H124
  Scenario: separate Call and Handoff boxes; the role default is offered once, as <Default>
    Given the managed template "call_team.cmpl" says "Team call template."
    When the user opens the Call template list of /sh project-template and leaves it
    Then the Call template list offered "<Default>" and "call_team.cmpl" but not "call_default.cmpl"
