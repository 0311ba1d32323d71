@blitz
Feature: status-widget-shows-the-phase
  The widget shows the phase (Waiting, Writing, Finished) with plain counters: "Inputs deferred
  (0)" from the moment capture starts, /sh cancel while a request is active, and never numbered
  or fractional progress or a request for user input (reference: Status).

  @rule-H68b @rule-H68c
  Scenario: the writing widget counts deferred inputs from zero and advertises /sh cancel
    When the model asks for the template once and then stops
    Then the status widget now shows "Writing Session Handoff"
    And the status widget now shows "Inputs deferred (0)"
    And every widget line of the active request advertises /sh cancel

  @rule-H69
  Scenario: the widget shows no numbered progress and never asks for user input
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the status widget showed "Session Handoff Finished"
    And the status widget never showed numbered progress or a request for user input

  @rule-H64b
  Scenario: the widget sits above the input editor
    When the model asks for the template once and then stops
    Then the status widget now shows "Writing Session Handoff"
    And every widget update of the implementation is placed above the editor

  @rule-H6
  Scenario: the /sh menu offers Start first, and Cancel first while a handoff is active
    When the user opens the /sh menu and dismisses it
    Then the /sh menu offered Start first, then Recovery, Settings, Project templates and Help
    Given the model asks for the template once and then stops
    When the user opens the /sh menu and dismisses it
    Then the /sh menu offered Cancel first, then Recovery, Settings, Project templates and Help

  @rule-H66
  Scenario: the Finished widget stays until the next ordinary input
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the status widget now shows "Session Handoff Finished"
    When the user asks "what is next?" and the model answers
    Then the status widget no longer shows an active handoff

  @rule-H3
  Scenario: there is no /sh config subcommand
    When the user runs "/sh config"
    Then the extension opened no dialog and started nothing
    And the handoff config file is unchanged

  @rule-H3
  Scenario: there is no public /sh cleanup subcommand
    Given a file "leftover" already sits where this session's dossier goes
    When the user runs "/sh cleanup"
    Then the extension opened no dialog and started nothing
    And the file "leftover" is untouched

  @rule-H3
  Scenario: there is no public /sh retry subcommand
    Given the model asks for the template once and then stops
    When the user runs "/sh retry"
    Then the extension sent the model nothing but the Call instruction
    And the status widget now shows "Writing Session Handoff"

  @needs-virtual-time @rule-H67
  Scenario: Wait Time ends at the template request, Handoff Time runs to the receiver's turn
    When the model asks for the template, takes 2 seconds before writing, then writes and finishes
    Then every status widget showed "Wait Time 0:00", and the last one "Handoff Time 0:02"

  @needs-virtual-time @rule-H67
  Scenario: a widget redrawn while the handoff is written keeps the Wait Time of the template request
    When the model asks for the template, takes 5 seconds, and the user types a prompt while the handoff is written
    Then every status widget showed "Wait Time 0:00", and the last one "Handoff Time 0:05"

  @needs-virtual-time @needs-held-model-calls @rule-H67
  Scenario: Wait Time counts from a start made while the model was busy
    When the user runs "/sh start" while the model answers for 5 seconds, then the model writes the handoff and finishes it
    Then the last status widget showed a Wait Time of 5 seconds

  @needs-virtual-time @rule-H67
  Scenario: Handoff Time runs to the end of the receiver's turn
    When the user runs "/sh start", the model writes the handoff and finishes it, and the receiver's turn takes 5 seconds
    Then the last status widget showed a Handoff Time of 5 seconds

  @needs-virtual-time @rule-H67
  Scenario: Handoff Time starts at the template request, not at the handoff request
    When the model takes 3 seconds before asking for the template and 2 seconds before writing, then writes and finishes
    Then the last status widget showed "Session Handoff Finished" and "Handoff Time 0:02"
