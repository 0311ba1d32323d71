@rules
Feature: synthesis-model-and-effort
  synthesisModel "inherit" (the default) synthesizes with the active Pi model; a pinned
  provider/model is resolved through Pi's model registry, and a pinned model that is missing or
  has no API key cancels the compaction clearly. synthesisEffort (default medium) sets the
  reasoning level of the synthesis call ("inherit": the session's thinking level); the Brief
  records the active model, the synthesis model it used and the configured effort label
  (spec §6, §8, §18).

  Background:
    Given another model "fake/other" has a context window of 200,000 tokens

  @rule-P25b @rule-P64a @rule-P64b
  Scenario: without a config the active model writes the Brief
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then every synthesis request went to "fake/fake-model"
    And the Brief's frontmatter records modelId "fake/fake-model" and synthesisModel "fake/fake-model"

  @rule-P33 @rule-P64a @rule-P64b
  Scenario: a pinned synthesis model writes the Brief
    Given the extension config file holds {"synthesisModel": "fake/other"}
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then every synthesis request went to "fake/other"
    And the Brief's frontmatter records modelId "fake/fake-model" and synthesisModel "fake/other"

  @rule-P34a
  Scenario: a pinned synthesis model missing from Pi's registry cancels the compaction
    Given the extension config file holds {"synthesisModel": "fake/missing"}
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no synthesis request was made
    And a notification says Pi Session Continuity failed, naming "fake/missing"

  @rule-P34b
  Scenario: a synthesis model without an API key cancels the compaction
    Given another model "keyless/model" has a context window of 200,000 tokens and no API key
    And the extension config file holds {"synthesisModel": "keyless/model"}
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no synthesis request was made
    And a notification says Pi Session Continuity failed, naming "keyless/model"

  @rule-P25c @rule-P37 @rule-P64c
  Scenario: the default effort is medium
    Given the active model reasons, with an output limit of 65,536 tokens
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the synthesis request asked for reasoning "medium"
    And the Brief's frontmatter records synthesisEffort "medium"

  @rule-P36b @rule-P37 @rule-P64c
  Scenario Outline: every effort label is accepted and sets the reasoning level
    Given the active model reasons, with an output limit of 65,536 tokens
    And the session thinking level is "high"
    And the extension config file holds {"synthesisEffort": "<effort>"}
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And the synthesis request asked for reasoning "<requested>"
    And the Brief's frontmatter records synthesisEffort "<effort>"

    # What Pi sends: pi-ai's streamSimple clamps the level to what the model supports
    # (dist/api/openai-completions.js:508-509), so xhigh goes out as high on this model.
    Examples:
      | effort  | requested |
      | inherit | high      |
      | minimal | minimal   |
      | low     | low       |
      | medium  | medium    |
      | high    | high      |
      | xhigh   | high      |

  @rule-P64c
  Scenario: a model that does not reason still records a spec effort label
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the Brief's frontmatter records a synthesisEffort among inherit, minimal, low, medium, high, xhigh

  @rule-P23
  Scenario: the synthesis output budget stays within the model's output limit
    The medium reasoning allowance and the body reserve together ask for more than this model
    can produce; the budget is capped at the model's limit, which still leaves room for a body.
    Given the active model reasons, with an output limit of 14,000 tokens
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And the synthesis request asked for at most 14,000 output tokens

  @rule-P23
  Scenario: a long session's synthesis keeps its whole output budget on the wire
    A synthesis with reasoning goes through pi-ai's streamSimple, which lowers max_tokens to what
    the window leaves beside its estimate of the input and a safety margin. The transcript is
    trimmed to leave the whole budget: 14,000 tokens, the small model's limit.
    Given another model "fake/small" reasons, with a context window of 64,000 tokens and an output limit of 14,000 tokens
    And the extension config file holds {"synthesisModel": "fake/small", "synthesisEffort": "medium"}
    And the user has worked through 4 turns of 60,000 characters each
    When native compaction reaches its threshold
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And the synthesis request asked for at least 14,000 output tokens

  @rule-P2
  Scenario: the synthesis model's reasoning never becomes part of the Brief
    Given the active model reasons, with an output limit of 65,536 tokens
    And the synthesis model reasons "PRIVATE-REASONING-7Q2" before it writes the Brief
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And the persisted compaction summary does not contain "PRIVATE-REASONING-7Q2"
