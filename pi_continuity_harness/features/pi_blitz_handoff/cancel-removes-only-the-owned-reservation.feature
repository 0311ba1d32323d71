@blitz
Feature: cancel-removes-only-the-owned-reservation
  /sh cancel before the native cutover invalidates the request, its Finish ID, reminder and
  retrieval, and removes only the exact reservation the extension owns; a foreign file at
  that path is never touched (reference: Status, cancellation and recovery).

  Scenario: cancel-removes-only-the-owned-reservation
    When the model asks for the template and the user cancels the handoff
    Then the owned dossier reservation was removed
    And a notification says "Session Handoff cancelled"
    And the status widget now shows "Session Handoff Cancelled"
    And Pi did not switch sessions

  Scenario: a leftover file blocks the reservation and survives the cancel
    Given a file "leftover" already sits where this session's dossier goes
    When the user runs "/sh start"
    Then a notification says "leftover dossier blocks"
    And the file "leftover" is untouched
    When the user runs "/sh cancel"
    Then a notification says "No active Session Handoff"
    And the file "leftover" is untouched

  Scenario: only one request is active at a time
    Given the model asks for the template once and then stops
    When the user runs "/sh start"
    Then a notification says "already active"
    And the status widget now shows "Writing Session Handoff"

  @needs-held-model-calls
  Scenario: a file that appears before the template is retrieved is never removed
    When a file "intruder" appears where the dossier goes while the model prepares, and the user cancels
    Then the template request was refused because the file exists
    And the file "intruder" is untouched
