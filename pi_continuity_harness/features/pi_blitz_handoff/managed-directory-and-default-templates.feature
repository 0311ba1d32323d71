@blitz
Feature: managed-directory-and-default-templates
  Loading creates the missing managed directories (a deliberate directory symlink is used as it
  is) and installs both default templates; a changed default is first moved to a timestamped
  file under templates/backups/, other templates are kept (legacy ones stay selectable); the
  template catalogue is nonrecursive and leaves backups/ out (reference: Managed paths,
  templates and projects).

  @rule-H109
  Scenario: a fresh agent directory gets the managed directories at startup
    When Pi starts
    Then the managed directories "recovery", "templates" and "templates/backups" exist

  @needs-held-model-calls @rule-H109
  Scenario: a deliberately symlinked recovery directory is kept and used
    Given the managed directory "recovery" is a symbolic link to the directory "$AGENT/recovery-kept-elsewhere"
    When Pi reloads
    And the user sends "also check the logs" and "then ship it" while the model writes the handoff, and the model stops before Finish
    Then the managed directory "recovery" is still the symbolic link the user made
    And the recovery directory holds exactly one file, with both deferred prompts

  @rule-H110
  Scenario: a changed default template is backed up before it is replaced; other templates stay
    Given the managed template "call_default.cmpl" says "My own call wording."
    And the managed template "call_team.cmpl" says "Team call template."
    When Pi reloads
    Then templates/backups holds a file that says "My own call wording."
    And the managed template "call_default.cmpl" no longer says "My own call wording."
    And the managed template "call_team.cmpl" says "Team call template."

  @rule-H110
  Scenario: unchanged default templates are not backed up at a reload
    Given the managed template "call_team.cmpl" says "Team call template."
    When Pi reloads
    Then the managed directories "recovery", "templates" and "templates/backups" exist
    And templates/backups holds no file
    And the managed template "call_team.cmpl" says "Team call template."

  @rule-H110
  Scenario: a second replacement keeps the first backup
    Given the managed template "call_default.cmpl" says "First own wording."
    When Pi reloads
    And the user asks "anything new?" and the model answers after 2 seconds
    Given the managed template "call_default.cmpl" says "Second own wording."
    When Pi reloads
    Then templates/backups holds a file that says "First own wording."
    And templates/backups holds a file that says "Second own wording."

  @rule-H111
  Scenario: templates under backups/ are not offered
    Given the managed template "call_team.cmpl" says "Team call template."
    And the managed template "backups/call_old.cmpl" says "Old call template."
    When the user opens the "callTemplate" list of /sh settings and leaves it
    Then the settings template list offered "call_team.cmpl" and "Enter another filename" but neither "call_old.cmpl" nor "backups/call_old.cmpl"

  @rule-H117
  Scenario: a legacy template is neither removed nor hidden
    Given the managed template "call_fast.cmpl" says "Fast call template."
    When Pi reloads
    Then the managed template "call_fast.cmpl" says "Fast call template."
    When the user opens the "callTemplate" list of /sh settings and leaves it
    Then the settings template list offered "call_fast.cmpl" and "Enter another filename" but neither "handoff_default.cmpl" nor "call_empty.cmpl"
