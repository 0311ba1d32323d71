@smoke
Feature: reload-stale-is-inert
  A same-session pending Brief left behind (a checkpoint, or an interrupted handoff) is
  reported after reload or restart but never compacted or injected automatically
  (spec §7, §13, §15 smoke 10).

  @rule-P59a @rule-P59c @rule-P90h @rule-P97b
  Scenario: reload-stale-is-inert
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When Pi reloads
    Then a notification says a stale pending Continuity Brief was found for this session and left inert
    And no compaction entry was persisted
    And no message was submitted to the model after the reload
    When the user sends a short prompt
    Then the model request for that prompt does not contain the stale Brief

  @rule-P59a
  Scenario: a stale pending Brief is reported at every start, not only the first
    The Brief stays pending and inert until the user deals with it, so every startup that finds
    it reports it: a notice given once per process (or per project) would leave a reload silent.
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When Pi reloads
    Then a notification says a stale pending Continuity Brief was found for this session and left inert
    When Pi reloads
    Then a notification says a stale pending Continuity Brief was found for this session and left inert

  @rule-P59a
  Scenario: a stale pending Brief is reported when the user resumes its session
    Resuming a session from another one (`/resume`, RPC `switch_session`) starts it again with
    `session_start` reason `resume`: the same inspection as a reload or a restart, not only at a
    process start. The new session in between has its own directory and reports nothing.
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When the user starts a new session and then resumes the previous one
    Then a notification says a stale pending Continuity Brief was found for this session and left inert
    And no compaction entry was persisted
    And no message was submitted to the model after the resume

  @rule-P59a
  Scenario: a stale pending Brief is reported at startup even while the settings are refused
    Spec §13: startup reports a same-session pending Brief; a refusal of the native settings
    (reported at the same startup) is no reason to leave the stale Brief unmentioned.
    Given the user has worked through 2 turns
    And the user has saved a checkpoint
    When the project settings file is edited outside Pi to reserveTokens 400,000
    And Pi restarts
    Then a notification refuses: native compaction settings are invalid for the current model
    And a notification says a stale pending Continuity Brief was found for this session and left inert

  @needs-fs-faults @rule-P59a @rule-P90h @rule-P112
  Scenario: a crash after the Brief was written leaves it pending and inert on restart
    Given Pi crashes right after the pending Brief is written
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    And Pi restarts
    Then a notification says a stale pending Continuity Brief was found for this session and left inert
    And no compaction entry was persisted
    And no message was submitted to the model after the restart

  # Pi refuses a reload while it compacts; Pi 1.0.3-1.5.0 reload mid-compaction
  # (targets/realpi/versions.py). The handoff in flight must complete as if nothing happened.
  @needs-held-model-calls @needs-reload-refused-while-busy
  Scenario: a reload asked for while the Brief is synthesized is refused and the handoff completes
    Given the user has worked through 2 turns
    And Pi is asked to reload while the next Brief is being synthesized
    When native compaction reaches its threshold
    Then Pi did not reload
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And exactly one continuation was submitted
