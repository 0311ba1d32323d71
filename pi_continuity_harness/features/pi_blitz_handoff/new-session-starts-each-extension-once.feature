@blitz @host
Feature: new-session-starts-each-extension-once
  Host behaviour a handoff relies on (an implementation that does nothing passes these; they
  measure the Pi release, not the implementation): when a new session replaces the current one,
  every extension's session_start runs once for it, and what a session_start handler records
  reaches an RPC client as it is appended. Pi 1.0.3-1.5.2 run session_start twice on RPC
  new_session (the real-Pi target starts new sessions through ctx.newSession there) and stream
  nothing a session_start handler emits after a session replacement (capability
  rpc-session-start-events; targets/realpi/versions.py).

  Background:
    Given another extension records a custom entry whenever a session starts

  Scenario: new-session-starts-each-extension-once
    Given the user has worked through 1 turn
    When the user starts a new session linked to the current one
    Then every extension saw session_start for the new session exactly once

  @needs-rpc-session-start-events
  Scenario: an entry recorded at session_start reaches the client
    Given the user has worked through 1 turn
    When the user starts a new session linked to the current one
    Then the client was told of the entry recorded at the new session's start
