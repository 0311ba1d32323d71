@failures
Feature: earendil-pi-8371-synthesis-input-is-bounded
  Source: earendil-works/pi #8371 (and can1357/oh-my-pi #8920, anomalyco/opencode #17340,
  #50187): summarization input was unbounded, so a session larger than the window could never be
  compacted again.
  Proves: when the session holds far more than the synthesis model's window, the synthesis
  request is trimmed to fit that window with its output budget, and the handoff still commits a
  valid Brief (spec §6 minSynthesisTranscriptTokens, §14).

  @rule-P33 @rule-P38a @rule-P119a
  Scenario: a session larger than the synthesis window still gets a Brief that fits
    Given another model "fake/synth" has a context window of 64,000 tokens
    And the extension config file holds {"synthesisModel": "fake/synth"}
    And the user has worked through 3 turns of 120,000 characters each
    When native compaction reaches its threshold
    Then the transcript handed to Pi for that compaction was larger than the synthesis window
    And every synthesis request fits the context window of "fake/synth"
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
