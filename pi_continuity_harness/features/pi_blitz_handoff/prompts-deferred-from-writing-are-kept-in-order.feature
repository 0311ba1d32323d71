@blitz
Feature: prompts-deferred-from-writing-are-kept-in-order
  From the successful GET (the default Writing boundary) interactive and RPC prompts are
  captured: unchanged, in order, separate, never sent to the source model; they are
  appended to the dossier before cutover and kept in one recovery file until the
  receiver's bootstrap turn completes (reference: Transfer sequence 4, 6, 7).

  @needs-held-model-calls @rule-H22 @rule-H27a @rule-H27b @rule-H27c @rule-H36 @rule-H41a @rule-H68a @smoke
  Scenario: prompts-deferred-from-writing-are-kept-in-order
    When the user sends "first: run the tests" and "second: then deploy" while the model writes the handoff
    Then the deferred prompts never reached the source model
    And the status widget showed "Inputs deferred (2)"
    And Pi switched to a new session whose header links to the source session
    And the dossier ends with the deferred prompts, in order
    And the recovery directory holds no file

  @needs-held-model-calls @rule-H23 @rule-H27a @rule-H27b @rule-H28a @rule-H47 @rule-H68a @rule-H102a
  Scenario: with deferral from Request, a prompt while waiting for the handoff is captured
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "please also check the logs" while the model waits before asking for the template
    Then the deferred prompts never reached the source model
    And the status widget showed "Inputs deferred (1)"
    And the recovery file holds the deferred prompts unchanged, in order, with boundaries

  @needs-held-model-calls @rule-H22
  Scenario: with deferral from Writing, a prompt before the template request is answered normally
    When with deferral from writing the user sends "what is the status of the build?" while the model waits before asking for the template
    Then the prompt sent before the template request reached the source model
    And the status widget now shows "Waiting for Session Handoff"

  @rule-H136
  Scenario: deferred prompts reach the receiver only inside the dossier
    When the user sends "also check the logs" and "then ship it" while the model writes the handoff
    Then Pi switched to a new session whose header links to the source session
    And the receiver got "also check the logs" only inside the dossier it read

  @rule-H102a
  Scenario: prompts are captured into the configured recovery directory
    Given the recovery directory is set to "$AGENT/recovery-configured"
    When the user sends "also check the logs" and "then ship it" while the model writes the handoff, and the model stops before Finish
    Then the recovery directory holds exactly one file, with both deferred prompts

  @rule-H46b
  Scenario: one capture window has one recovery file
    When the user sends "also check the logs" and "then ship it" while the model writes the handoff, and the model stops before Finish
    Then the recovery directory holds exactly one file, with both deferred prompts

  @rule-H42
  Scenario: a failed bootstrap turn keeps the recovery file
    When the user sends "also check the logs" and "then ship it" while the model writes the handoff, and the receiver's first turn fails with a provider error
    Then Pi switched to a new session whose header links to the source session
    And the recovery file still holds the deferred prompts

  @rule-H42
  Scenario: a receiver turn failing after its read keeps the recovery file
    When the user sends "also check the logs" and "then ship it" while the model writes the handoff, and the receiver reads the dossier and then fails with a provider error
    Then Pi switched to a new session whose header links to the source session
    And the recovery file still holds the deferred prompts

  @needs-trace-faults @rule-H44b
  Scenario: a recovery file the receiver cannot delete is reported, not claimed as delivered
    Given removing a recovery file fails
    When the user sends "also check the logs" and "then ship it" while the model writes the handoff
    Then Pi switched to a new session whose header links to the source session
    And a warning or error notification names the recovery file that could not be deleted
