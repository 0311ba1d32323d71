@blitz
Feature: finish-rejects-stale-and-duplicate-ids
  session_handoff_finish({id}) is accepted once, with the exact returned ID only; a missing
  template, a stale or foreign ID and a duplicate Finish are rejected and leave the request,
  the file and the session unchanged (reference: Transfer sequence 5).

  @rule-H29b @rule-H33a @rule-H135 @smoke
  Scenario: finish-rejects-stale-and-duplicate-ids
    When the model writes the handoff and calls Finish twice with the returned ID
    Then exactly 1 Finish call was accepted
    And the second Finish call was rejected
    And Pi switched to a new session whose header links to the source session

  @rule-H29b @rule-H20
  Scenario: a template request after the accepted Finish does not reopen it for a second Finish
    When the model writes the handoff, calls Finish, asks for the template again and calls Finish again
    Then exactly 1 Finish call was accepted
    And the second Finish call was rejected
    And Pi switched to a new session whose header links to the source session

  @rule-H30 @rule-H31a
  Scenario: a Finish before the template is rejected
    When the user runs "/sh start" and the model calls Finish before asking for the template
    Then the Finish call was rejected
    And Pi did not switch sessions

  @rule-H29a @rule-H31a
  Scenario: a Finish with a foreign ID is rejected
    When the model asks for the template and calls Finish with the ID "0190aaaa-not-the-returned-id"
    Then the Finish call was rejected
    And Pi did not switch sessions

  @rule-H30 @rule-H31a
  Scenario: a Finish on a dossier written before the template was retrieved is rejected
    When the user runs "/sh start" and the model writes the dossier and calls Finish before asking for the template
    Then the Finish call was rejected
    And Pi did not switch sessions

  @rule-H31b
  Scenario: a rejected Finish leaves the request as it was, and the correct Finish then succeeds
    When the model calls Finish with a wrong ID, then with the returned one
    Then exactly 1 Finish call was accepted
    And Pi switched to a new session whose header links to the source session

  @rule-H29a
  Scenario: only the exact returned ID is accepted, not a padded copy of it
    When the model calls Finish with the returned ID padded with a space, then with the returned one
    Then the first Finish call was rejected
    And exactly 1 Finish call was accepted
    And Pi switched to a new session whose header links to the source session

  @rule-H29a
  Scenario: a Finish ID cut by one character is rejected
    When the model calls Finish with the returned ID cut by one character, then with the returned one
    Then the first Finish call was rejected
    And exactly 1 Finish call was accepted
    And Pi switched to a new session whose header links to the source session

  @rule-H34a
  Scenario: Finish is rejected while the dossier is empty
    When the model calls Finish before writing the dossier
    Then the Finish call was rejected
    And Pi did not switch sessions

  @rule-H34c
  Scenario: Finish accepts any nonempty file, heading or not
    When the model writes a dossier without any Markdown heading and finishes it
    Then exactly 1 Finish call was accepted
    And Pi switched to a new session whose header links to the source session

  @needs-held-model-calls @rule-H34b
  Scenario: Finish is rejected when the dossier path is a directory
    When a directory replaces the reserved file while the model writes, and the model calls Finish
    Then the Finish call was rejected
    And Pi did not switch sessions

  @needs-held-model-calls @rule-H34b
  Scenario: Finish is rejected when the dossier path is a symbolic link to a nonempty file
    When a symbolic link to a nonempty file replaces the reserved file while the model writes, and the model calls Finish
    Then the Finish call was rejected
    And Pi did not switch sessions

  @rule-H33b
  Scenario: nothing asks the model between the accepted Finish and the new session
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the source model was asked nothing after the accepted Finish but the writer's last reply

  @rule-H29c
  Scenario: Finish takes only the Finish ID
    When the user asks "what is next?" and the model answers
    Then every session_handoff_finish declaration the model received takes only the id
