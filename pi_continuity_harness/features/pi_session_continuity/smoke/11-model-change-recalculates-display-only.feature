@smoke
Feature: model-change-recalculates-display-only
  Token settings are the policy; percentages are display only. A model change recomputes
  the displayed percentages and never rewrites settings; settings that are structurally
  invalid for the new window refuse operation (spec §5, §6, §11, §15 smoke 11).

  Background:
    Given the active model has a context window of 372,000 tokens
    And another model "fake/huge" has a context window of 1,000,000 tokens
    And another model "fake/small" has a context window of 80,000 tokens
    And the native settings are reserveTokens 93,000 and keepRecentTokens 55,800

  @rule-P16 @rule-P89a @rule-P89b
  Scenario: model-change-recalculates-display-only
    When Pi starts
    Then the footer status reads "Continuity @ ~75.0%"
    When the user switches to the model "fake/huge"
    Then the footer status reads "Continuity @ ~90.7%"
    And the project settings file is byte-for-byte unchanged

  @rule-P16 @rule-P18a @rule-P29b @rule-P89b @rule-P89c @rule-P90f
  Scenario: a smaller window that invalidates the settings refuses operation
    When the user switches to the model "fake/small"
    Then a notification refuses: native compaction settings are invalid for the current model
    And the footer status no longer shows an effective trigger percentage
    And the project settings file is byte-for-byte unchanged

  @rule-P18b @rule-P29b
  Scenario: compaction under settings invalid for the new window is cancelled
    Given the native settings are reserveTokens 93,000 and keepRecentTokens 2,000
    And the user has worked through 2 turns
    When the user switches to the model "fake/small"
    And the user compacts the session manually
    Then native compaction was cancelled
    And no compaction entry was persisted
