@install @needs-print-mode
Feature: print-mode-is-read-only
  Without a UI, /continuity settings is read-only: it prints the current and effective values
  and the exact settings path, and never mutates configuration (spec §12, §18).

  @rule-P103a
  Scenario: print-mode-is-read-only
    Given Pi runs without a UI
    When the user runs "/continuity settings"
    Then no dialog was opened
    And the project settings file is byte-for-byte unchanged
