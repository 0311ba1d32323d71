@failures
Feature: pi-continue-33-work-resumes-after-compaction-without-user-input
  Source: Tiziano-AI/pi-continue #33 (and earendil-works/pi #7848, openai/codex #43855,
  can1357/oh-my-pi #635): after compaction the agent stopped until the user typed "continue".
  Proves: after a threshold compaction the verified disk Brief plus the fixed suffix is
  submitted once as a followUp, and it starts the next run by itself, within the same settled
  prompt, with no user input (spec §10, §18).

  @rule-P10 @rule-P20 @rule-P82a @rule-P82b @rule-P82c @rule-P85 @rule-P90d
  Scenario: the continuation starts the next run by itself
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then exactly one continuation was submitted
    And the continuation is the compaction summary followed by the fixed continuation suffix
    And the continuation reached the model after the compaction, in the same settled prompt
    And a notification says the continuation was submitted from the saved Brief
