@blitz
Feature: recovery-file-is-atomic-and-named-as-specified
  Captured prompts are kept in memory and in one atomic recovery file per capture window,
  named <filesystem-safe UTC timestamp with milliseconds>-<normalised source session ID>.md,
  with "--- Deferred Prompt N of M ---" boundaries; no capture, no file (reference:
  Deferral). A cancel keeps the file for an explicit /sh recover.

  @needs-held-model-calls
  Scenario: recovery-file-is-atomic-and-named-as-specified
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "keep this exactly:  two spaces" while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file is named after the UTC time in milliseconds and the source session ID
    And the recovery file holds the deferred prompts unchanged, in order, with boundaries
    And a notification says "Deferred prompts are kept in"

  Scenario: without a captured prompt there is no recovery file
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the recovery directory holds no file
