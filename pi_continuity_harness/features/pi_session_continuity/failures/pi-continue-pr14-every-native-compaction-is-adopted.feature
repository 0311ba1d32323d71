@failures
Feature: pi-continue-pr14-every-native-compaction-is-adopted
  Source: Tiziano-AI/pi-continue PR #14: in a Codex session only 2 of 6 compactions were
  package-owned; the others went through the native summarizer, leaving no ledger and no resume.
  Proves: threshold, overflow and manual compactions all enter session_before_compact and all
  commit the disk Brief (spec §5); Pi never summarises by itself, and every committed Brief is
  archived.

  @rule-P5a @rule-P6b @rule-P19a @rule-P19b @rule-P19c
  Scenario: threshold, overflow and manual compactions all carry a Brief
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the provider rejects the next request because it exceeds the context window
    And the user compacts the session manually after 2 turns
    Then Pi never persisted a summary of its own
    And Pi made no summarization request of its own
    And every compaction summary is archived
