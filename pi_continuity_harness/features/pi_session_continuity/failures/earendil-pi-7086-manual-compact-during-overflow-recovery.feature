@failures
Feature: earendil-pi-7086-manual-compact-during-overflow-recovery
  Source: earendil-works/pi #7086 (and can1357/oh-my-pi #11873): a manual /compact during
  overflow-recovery auto-compaction silently lost the retried turn.
  Proves: when the user compacts by hand while the overflow Brief is being synthesized, Pi
  aborts the overflow handoff (its synthesis resolves aborted and the hook cancels), the manual
  compaction commits its own Brief, exactly one compaction is persisted, nothing of Pi's own is
  persisted, and no continuation is forced (spec §10, §13).

  @needs-held-model-calls @rule-P5a @rule-P7b @rule-P19c @rule-P22 @rule-P24 @rule-P67 @rule-P108b @rule-P120a
  Scenario: a manual compact during the overflow handoff commits one Brief
    Given the user has worked through 3 turns
    And the user compacts the session manually while the next Brief is being synthesized
    When the provider rejects the next request because it exceeds the context window
    Then only one compaction entry was persisted
    And the persisted compaction summary is a valid schema-v2 Brief with handoffReason "manual-compaction"
    And no continuation was submitted
    And Pi never persisted a summary of its own
