@blitz
Feature: sh-start-transfers-to-a-parent-linked-session
  /sh start requests a transfer. The model retrieves the template, writes the dossier with
  the native write tool and finishes with the returned ID; once the source is idle, Pi
  switches to a fresh session linked to the source, whose short first prompt names the
  dossier's absolute path and the cleanup (reference: Transfer sequence 1-7).

  @rule-H11a @rule-H8 @rule-H12 @rule-H18b @rule-H18c @rule-H104a @rule-H115a @rule-H115b @rule-H39b @rule-H33a @rule-H37a @rule-H37b @rule-H37c @rule-H38 @rule-H39a @rule-H40a @rule-H44a @rule-H64a @smoke
  Scenario: sh-start-transfers-to-a-parent-linked-session
    Given the user has worked through 2 turns
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the writer's last reply ended normally before the switch
    And the receiver's first prompt names the dossier's absolute path and nothing of the source history
    And the receiver read the whole dossier
    And the bootstrap prompt tells the receiver to read the entire dossier, past any truncation
    And the bootstrap prompt tells the receiver to delete exactly the dossier after reading it
    And the dossier is gone after the receiver's completed turn
    And the status widget showed "Waiting for Session Handoff"
    And the status widget showed "Writing Session Handoff"
    And the status widget now shows "Session Handoff Finished"
    And the Call instruction tells the model to call session_handoff_get_template({}) before writing, and names neither the dossier file nor a Finish ID
    And the Call instruction starts with the installed call_default.cmpl and the template response carries the installed handoff_default.cmpl
    And the shipped Call template asks for the next safe checkpoint before the protocol
    And the shipped Handoff template asks for the V2 dossier
    And the bootstrap prompt tells the receiver to keep the dossier and report the blocker if the read fails

  @needs-held-model-calls @rule-H14a
  Scenario: /sh start during a run sends the Call only once the run settled
    When the user runs "/sh start" while the model is answering a prompt
    Then the Call instruction reached the model only after that run settled

  @rule-H19a @rule-H19c
  Scenario: the template response carries the selected Handoff template and the source transcript
    Given the managed template "handoff_marker.cmpl" says "HANDOFF-MARKER: write the dossier like this."
    And the handoff settings are {"handoffTemplate": "handoff_marker.cmpl"}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the template response carries "HANDOFF-MARKER" and names the source session file
    And Pi switched to a new session whose header links to the source session

  @rule-H2
  Scenario: the source session's tools stay as they are during a handoff
    When the user runs "/sh start" and the model writes the handoff, calling an unrelated tool on the way, and finishes it
    Then the tools Pi declared to the model stayed the same during the handoff, and every tool call ran
    And Pi switched to a new session whose header links to the source session

  @rule-H114
  Scenario: the extension never edits the project's ignore files
    Given the project has a .gitignore that says "node_modules/"
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the project's .gitignore is unchanged

  @rule-H7
  Scenario: /sh help lists every public subcommand
    When the user runs "/sh help"
    Then a notification lists every public /sh subcommand
    And no notification mentions "__cutover"

  @rule-H12
  Scenario: an explicit model start ignores the thresholds
    At 60 % of the window with the critical level at 50 %, the model's start is still accepted.
    Given the active model has a context window of 100,000 tokens
    And the handoff settings are {"contextWarningPercent": 30, "criticalWarningPercent": 50}
    When the model, at 60,000 context tokens, is asked to start a handoff and carries it out
    Then the model's start was accepted
    And Pi switched to a new session whose header links to the source session
