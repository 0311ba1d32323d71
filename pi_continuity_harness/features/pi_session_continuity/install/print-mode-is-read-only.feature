@install @needs-print-mode
Feature: print-mode-is-read-only
  Without a UI (print and json modes) every /continuity command returns text and mutates
  nothing: settings prints the current and effective values and the exact settings path,
  status returns the status as text, checkpoint writes no Brief (spec §12, §18). What a
  command shows there is what it writes to stdout or stderr (Pi hands stdout to stderr).

  @rule-P103a @rule-P103b @rule-P103c @rule-P103d
  Scenario: print-mode-is-read-only
    Given Pi runs without a UI
    When the user runs "/continuity settings"
    Then no dialog was opened
    And the project settings file is byte-for-byte unchanged
    And the command output names the project settings path and the reserve and keep-recent values

  @rule-P104a
  Scenario: status returns its status as text without a UI
    Given Pi runs without a UI
    When the user runs "/continuity status"
    Then the command output begins with "Pi Session Continuity"
    And the command output shows the status word, the model window 200,000 and the reserve 50,000

  @rule-P104b
  Scenario: a checkpoint writes nothing without a UI
    Given Pi runs without a UI
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then no file was written in the project
    And the command output says nothing was written

  @rule-P104c
  Scenario: bare /continuity is the read-only settings text without a UI
    Given Pi runs without a UI
    When the user runs "/continuity"
    Then no dialog was opened
    And no file was written in the project
    And the command output says nothing was written
    And the command output names the project settings path and the reserve and keep-recent values
