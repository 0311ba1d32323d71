@blitz
Feature: cancel-removes-only-the-owned-reservation
  /sh cancel before the native cutover invalidates the request, its Finish ID, reminder and
  retrieval, and removes only the exact reservation the extension owns; a foreign file at
  that path is never touched (reference: Status, cancellation and recovery).

  @rule-H71a @rule-H65 @rule-H75 @smoke
  Scenario: cancel-removes-only-the-owned-reservation
    When the model asks for the template and the user cancels the handoff
    Then the owned dossier reservation was removed
    And exactly one notification followed the cancel, and it reports no failure
    And the status widget no longer shows an active handoff
    And Pi did not switch sessions

  @rule-H72a @rule-H72b
  Scenario: a leftover file blocks the reservation and survives the cancel
    Given a file "leftover" already sits where this session's dossier goes
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the handoff was refused naming the dossier file
    And the file "leftover" is untouched
    And Pi did not switch sessions
    When the user runs "/sh cancel"
    Then the file "leftover" is untouched

  @rule-H13
  Scenario: a model start while a command's request waits is refused and changes nothing
    When the user runs "/sh start" and the model calls blitz_handoff start before it asks for the template and stops
    Then the model's start was refused

  @rule-H13 @rule-H64a @rule-H71a
  Scenario: only one request is active at a time
    Given the model asks for the template once and then stops
    When the user runs "/sh start"
    Then the start was refused and the active request is unchanged
    And the status widget now shows "Writing Session Handoff"
    When the user runs "/sh cancel"
    Then the owned dossier reservation was removed

  @needs-held-model-calls @rule-H72a @rule-H72b
  Scenario: a file that appears before the template is retrieved is never removed
    When a file "intruder" appears where the dossier goes while the model prepares, and the user cancels
    Then the template request was refused
    And the file "intruder" is untouched

  @rule-H74
  Scenario: a cancel never aborts unrelated work in progress
    When the model asks for the template and the user cancels the handoff while the model runs an unrelated tool
    Then no run was aborted
    And the tool's result of that turn was recorded
    And the owned dossier reservation was removed
    And the status widget no longer shows an active handoff

  @rule-H70a
  Scenario: after a cancel the old Finish ID is rejected
    When the model asks for the template and the user cancels the handoff
    And the model then writes the dossier and calls Finish with the ID it was given
    Then the Finish call was rejected
    And Pi did not switch sessions

  @rule-H70c
  Scenario: after a cancel the old request's template is refused and a new start is accepted
    When the model asks for the template and the user cancels the handoff
    And the model then asks for the template again
    Then the last template request was refused
    When the user runs "/sh start"
    Then the status widget now shows "Waiting for Session Handoff"

  @rule-H19d @rule-H70a
  Scenario: a request after a cancel gets a fresh Finish ID
    When the model asks for the template and the user cancels the handoff
    And the user runs "/sh start"
    And the model then asks for the template again
    Then the two successful template responses gave different Finish IDs

  @needs-virtual-time @rule-H70b
  Scenario: after a cancel no reminder comes
    Given the handoff settings are {"readinessRetrySeconds": 1}
    When the model asks for the template and the user cancels the handoff
    Then the owned dossier reservation was removed
    When the user asks "anything else?" and the model answers after 2 seconds
    Then exactly 0 handoff reminders were shown

  @rule-H73
  Scenario: a reservation the model already deleted makes the cancel no failure
    When the model asks for the template, deletes the reserved file and stops; then the user runs "/sh cancel"
    Then exactly one notification followed the cancel, and it reports no failure
    And the status widget no longer shows an active handoff

  @needs-trace-faults @rule-H73 @rule-H75
  Scenario: a reservation that cannot be removed is reported once, as a failure naming it
    Given removing the dossier reservation fails
    When the model asks for the template and the user cancels the handoff
    Then exactly one notification followed the cancel: a warning or error naming the dossier file
    And the reserved dossier is still there

  @needs-held-model-calls @rule-H138
  Scenario: an aborted reply neither pauses nor cancels the handoff
    When the model asks for the template and the user aborts its next reply
    Then the status widget now shows "Writing Session Handoff"
    And the reserved dossier is still there

  @rule-H71b
  Scenario: a cancel after the accepted Finish removes the dossier even when it is to be kept
    Given the handoff settings are {"deleteHandoffAfterReading": false}
    When the user cancels the handoff after the accepted Finish, before the switch
    Then exactly 1 Finish call was accepted
    And the owned dossier reservation was removed
    And Pi did not switch sessions

  @needs-held-model-calls @rule-H70a @rule-H71a
  Scenario: a cancel during the dossier write outlasts it and the Finish
    When the model asks for the template and the user cancels the handoff while the model writes the dossier, then calls Finish
    Then the Finish call was rejected
    And Pi did not switch sessions
    And the owned dossier reservation was removed
