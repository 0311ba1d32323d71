@blitz
Feature: recovery-file-is-atomic-and-named-as-specified
  Captured prompts are kept in memory and in one atomic recovery file per capture window,
  named <filesystem-safe UTC timestamp with milliseconds>-<normalised source session ID>.md,
  with "--- Deferred Prompt N of M ---" boundaries; no capture, no file (reference:
  Deferral). A cancel keeps the file for an explicit /sh recover.

  @needs-held-model-calls @rule-H46a @rule-H47 @rule-H27b @rule-H76a @rule-H28b @rule-H23 @rule-H102a
  Scenario: recovery-file-is-atomic-and-named-as-specified
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "keep this exactly:  two spaces" while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file is named after the UTC time in milliseconds and the source session ID
    And the recovery file holds the deferred prompts unchanged, in order, with boundaries
    And a notification names the recovery file

  @rule-H45
  Scenario: without a captured prompt there is no recovery file
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then the recovery directory holds no file
    And Pi switched to a new session whose header links to the source session

  @needs-held-model-calls @rule-H134
  Scenario: a new recovery file is owner-only
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "keep this private" while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file is owner-only

  @needs-held-model-calls @rule-H47
  Scenario: every boundary of a recovery file counts all the prompts of the snapshot
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "please also check the logs" and then "then ship it" while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file holds the deferred prompts unchanged, in order, with boundaries

  @needs-held-model-calls @rule-H27b
  Scenario: a captured prompt keeps the spaces around it
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "  indented, and a space after " while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file holds the deferred prompts unchanged, in order, with boundaries

  @needs-held-model-calls @rule-H76b
  Scenario: captured prompts are not replayed after a cancel
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "please also check the logs" while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the deferred prompts never reached the source model
    And the recovery file holds the deferred prompts unchanged, in order, with boundaries

  @rule-H80b
  Scenario: after a reload leftover recovery files are neither executed nor removed
    Given the recovery directory holds "2026-01-01T00-00-00-000Z-s1.md" with the prompts "run the tests" and "then deploy"
    When Pi reloads
    Then the extension sent the model no message
    When the user chooses "Inspect" for "2026-01-01T00-00-00-000Z-s1.md" in /sh recover
    Then the whole recovery file was shown
    And "2026-01-01T00-00-00-000Z-s1.md" is still in the recovery directory

  @needs-held-model-calls @rule-H46a
  Scenario: recovery file name drops an underscore and a dot of the id
    Given the session id is "blitz_run.7"
    And the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "keep this for later" while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file is named after the UTC time in milliseconds and the source session ID

  @needs-held-model-calls @rule-H27b
  Scenario: a captured prompt keeps its combining accent and CRLF
    Given the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends a prompt with a combining accent and CRLF line ends while the model waits before asking for the template
    And the user runs "/sh cancel"
    Then the recovery file holds the deferred prompts unchanged, in order, with boundaries

  @needs-trace-faults @needs-held-model-calls @rule-H48
  Scenario: a recovery file that cannot be written is reported
    Given writing the recovery file fails
    And the handoff settings are {"deferPromptsFrom": "request"}
    When the user sends "keep this for later" while the model waits before asking for the template
    Then a warning or error notification names the recovery directory
    And the deferred prompts never reached the source model
