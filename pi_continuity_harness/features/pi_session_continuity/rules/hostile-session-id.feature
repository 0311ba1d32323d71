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

    # Two spellings of one visible name: precomposed U+00E9 and "e" + U+0301 (NFC and NFD). A
    # filesystem may normalise names (macOS), an implementation must not: they are two sessions.
    Examples: two Unicode normalisations of one name
      | first       | second      |
      | café-alpha  | café-alpha  |

  # A table cell loses its surrounding spaces (Gherkin trims it), so this pair is spelled out.
  @rule-P52
  Scenario: session ids that differ only in surrounding whitespace never share a directory
    Given the user has worked through 2 turns
    When the session file is rewritten outside Pi to name the session " team-alpha "
    And Pi restarts
    And the user runs "/continuity checkpoint"
    And the session file is rewritten outside Pi to name the session "team-alpha"
    And Pi restarts
    And the user runs "/continuity checkpoint"
    Then the Briefs of the sessions " team-alpha " and "team-alpha" lie in different directories under the artifact directory
