@install
Feature: untrusted-project-is-left-alone
  Project-local files are read or written only when the project is trusted; without trust
  no Brief can be made durable, so native compaction fails closed (spec §6, §20.7).

  @rule-P41a @rule-P98a
  Scenario: untrusted-project-is-left-alone
    Given the project is not trusted
    And the extension config file holds {"artifactDirectory": "elsewhere"}
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then no file was written in the project
    And a notification says the project is not trusted

  @needs-fs-faults @rule-P40
  Scenario: the extension config of an untrusted project is never read
    Given the project is not trusted
    And the extension config file holds {"artifactDirectory": "elsewhere"}
    When Pi starts
    And the user runs "/continuity status"
    Then the extension did not read the extension config file

  @rule-P41b
  Scenario: threshold compaction in an untrusted project is cancelled
    Given the project is not trusted
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no file was written in the project

  Scenario: settings are read-only in an untrusted project
    Given the project is not trusted
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    Then no file was written in the project

  # The extension asks Pi (ctx.isProjectTrusted()); Pi 1.0.3-1.4.0 ignore a saved "no" for a
  # project without trust-requiring resources (targets/realpi/versions.py).
  @needs-saved-trust-decision @rule-P41a
  Scenario: a project the user distrusted in Pi's trust store is left alone
    Given the user distrusted the project in Pi's trust store, and it has no project settings
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then no file was written in the project
    And a notification says the project is not trusted
