@blitz
Feature: recover-executes-then-deletes-after-a-completed-turn
  /sh recover lists the recovery files; Inspect shows the whole unchanged file, Execute
  sends all its prompts as one turn of the current session with their order and
  boundaries, and the file is deleted only after that turn completed; Discard removes the
  exact file (reference: Status, cancellation and recovery).

  @rule-H81a @rule-H83 @rule-H84a @smoke
  Scenario: recover-executes-then-deletes-after-a-completed-turn
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the model will answer the next turn
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    And "2026-01-01T00-00-00-000Z-s1.md" is gone

  @rule-H84b
  Scenario: a recovery turn that fails keeps the file
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the model will fail the next turn with a provider error
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @rule-H82 @rule-H81a
  Scenario: inspect shows the whole file and keeps it
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When the user chooses "Inspect" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then the whole recovery file was shown
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @rule-H81a
  Scenario: the recovery list holds only the top-level Markdown files
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the recovery directory also holds "notes.txt"
    And the recovery directory also holds "older/2026-01-02T00-00-00-000Z-s2.md"
    And the recovery directory also holds "2026-01-03T00-00-00-000Z-s3.md"
    When the user opens /sh recover and leaves it
    Then the recovery list offered "2026-01-01T00-00-00-000Z-s1.md" and "2026-01-03T00-00-00-000Z-s3.md" but neither "notes.txt" nor "s2.md"

  @rule-H85a @rule-H81a
  Scenario: discard removes the exact file
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the recovery directory also holds "2026-01-02T00-00-00-000Z-s2.md"
    When the user chooses "Discard" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then "2026-01-01T00-00-00-000Z-s1.md" is gone
    And "2026-01-02T00-00-00-000Z-s2.md" is still in the recovery directory

  @rule-H85a
  Scenario: discard removes the chosen file from the configured recovery directory
    Given the recovery directory is set to "$AGENT/custom-recovery"
    And the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When the user chooses "Discard" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then "2026-01-01T00-00-00-000Z-s1.md" is gone

  @rule-H87a
  Scenario: no recovery while a handoff is active
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When while the handoff is written the user chooses "Discard" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory
    And the status widget now shows "Writing Session Handoff"

  @rule-H85b
  Scenario: discard removes nothing without the confirmation
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When the user chooses "Discard" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover and declines the deletion
    Then "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory
    And a confirmation named "2026-01-01T00-00-00-000Z-s1.md"

  @rule-H140
  Scenario: a recovery turn whose tool call fails still completes and deletes the file
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the model will call a tool that fails and then answer in the next turn
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    And "2026-01-01T00-00-00-000Z-s1.md" is gone

  @rule-H140
  Scenario: a recovery turn cut at the output limit still completes and deletes the file
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the model will stop at its output limit in the next turn
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    And "2026-01-01T00-00-00-000Z-s1.md" is gone

  @rule-H84e
  Scenario: a later successful turn does not heal a failed recovery turn
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the model will fail the next turn with a provider error
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    When the user asks "what is left to do?" and the model answers
    Then "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @rule-H81b
  Scenario: each listed recovery file shows its date
    Given the recovery directory holds "leftover-s1.md" with the prompts "run the tests" and "then deploy"
    When the user opens /sh recover and leaves it
    Then the recovery list showed a date beside "leftover-s1.md"
    And "leftover-s1.md" is still in the recovery directory

  @needs-held-model-calls @rule-H84c
  Scenario: an aborted recovery turn keeps the file
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the user will abort the model's reply in the next turn
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @needs-trace-faults @rule-H86
  Scenario: an unreadable recovery file is reported and kept
    Given reading the recovery file "2026-01-01T00-00-00-000Z-s1.md" fails
    And the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then a notification names "2026-01-01T00-00-00-000Z-s1.md"
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory
    And the extension sent the model no message

  @rule-H86 @rule-H82
  Scenario: a recovery file that is not UTF-8 is reported unreadable and kept
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with bytes that are not UTF-8
    When the user chooses "Inspect" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then a warning or error notification names "2026-01-01T00-00-00-000Z-s1.md"
    And nothing shown holds a replacement character
    And "2026-01-01T00-00-00-000Z-s1.md" still holds the bytes it was planted with

  @rule-H84d
  Scenario: a recovery send that a busy session rejects keeps the file
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover while the model answers
    Then a notification was shown
    And Pi rejected the extension's send of the recovered prompts because the session was busy
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @rule-H85a
  Scenario: discard removes the chosen file, not the first listed
    Given the recovery directory holds "2026-01-02T00-00-00-000Z-s2.md" with the prompts "run the tests" and "then deploy"
    And the recovery directory also holds "2026-01-01T00-00-00-000Z-s1.md"
    When the user chooses "Discard" for "2026-01-02T00-00-00-000Z-s2.md" in /sh recover
    Then "2026-01-02T00-00-00-000Z-s2.md" is gone
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @needs-trace-faults @rule-H85a
  Scenario: a discard that cannot remove the file says so
    Given removing a recovery file fails
    And the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When the user chooses "Discard" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then a warning or error notification names "2026-01-01T00-00-00-000Z-s1.md"
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @needs-trace-faults @rule-H84a
  Scenario: a recovered file that cannot be deleted is reported
    Given removing a recovery file fails
    And the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    And the model will answer the next turn
    When the user chooses "Execute" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then both recovered prompts reached the model as one turn, in order
    And a warning or error notification names "2026-01-01T00-00-00-000Z-s1.md"
