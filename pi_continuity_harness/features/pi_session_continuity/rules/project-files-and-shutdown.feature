@rules
Feature: project-files-and-shutdown
  The extension writes only its own artifacts, its config and the project settings (never
  AGENTS.md or another instruction file), and session_shutdown only drops process-local state:
  it writes, archives or removes no file and sends no message (spec §4, §18).

  @rule-P9
  Scenario: the extension writes no project file but its own
    Given the user has saved a checkpoint
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the compaction summary is a new Brief of this session
    And no project file was written but the artifacts, the extension config and the project settings file

  @rule-P127
  Scenario: shutting the session down writes, archives and sends nothing
    Given the user has saved a checkpoint
    When Pi reloads
    And Pi restarts
    Then no artifact file changed since the checkpoint was saved
    And no message was submitted to the model after the restart
