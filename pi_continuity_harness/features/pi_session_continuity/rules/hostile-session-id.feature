@rules
Feature: hostile-session-id
  Pi 1.6 refuses a hostile --session-id but resumes a session file whose header names any id
  (session-manager.js:731). The session id is made filesystem-safe before it becomes a path
  component: a Brief never leaves <artifactDirectory>/<one component>/ (spec §7, seed README).

  @rule-P52
  Scenario: a session id with path separators stays one path component
    Given the user has worked through 2 turns
    When the session file is rewritten outside Pi to name the session "../../outside-the-artifacts"
    And Pi restarts
    And the user runs "/continuity checkpoint"
    Then every Brief written since lies in one directory directly under the artifact directory

  @rule-P52
  Scenario Outline: two distinct session ids never share a directory
    Given the user has worked through 2 turns
    When the session file is rewritten outside Pi to name the session "<first>"
    And Pi restarts
    And the user runs "/continuity checkpoint"
    And the session file is rewritten outside Pi to name the session "<second>"
    And Pi restarts
    And the user runs "/continuity checkpoint"
    Then the Briefs of the sessions "<first>" and "<second>" lie in different directories under the artifact directory

    Examples:
      | first       | second      |
      | team/alpha  | team_alpha  |
      | Team-Alpha  | team-alpha  |
