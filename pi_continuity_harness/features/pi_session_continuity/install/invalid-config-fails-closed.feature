@install
Feature: invalid-config-fails-closed
  An invalid extension config or structurally invalid native settings fail loudly, name the
  path (and the field), and disable automatic behaviour until corrected; a checkpoint is
  refused too, and nothing announces a durable Brief in a refused state (spec §6, §11, §13,
  §20.7).

  @rule-P36a @rule-P38a @rule-P46a @rule-P46b
  Scenario: invalid-config-fails-closed
    Given the extension config file holds {"synthesisEffort": "extreme"}
    And the user has worked through 2 turns
    Then a notification names the extension config file and the field "synthesisEffort"
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no Continuity Brief was written

  @rule-P26 @rule-P38a @rule-P46a
  Scenario: a removed percentage field is rejected
    Given the extension config file holds {"enabled": true, "triggerPercent": 75}
    When Pi starts
    Then a notification names the extension config file and the field "triggerPercent"

  @rule-P26 @rule-P28a
  Scenario Outline: every removed automatic percentage field is rejected by its name
    Given the extension config file holds {"enabled": true, "<field>": 75}
    When Pi starts
    Then a notification names the extension config file and the field "<field>"

    Examples:
      | field             |
      | keepRecentPercent |
      | thresholdPercent  |

  @rule-P27 @rule-P28a @rule-P28b
  Scenario: every invalid field of the extension config is named, native token fields included
    Given the extension config file holds {"enabled": "yes", "colour": "red", "reserveTokens": 1000}
    When Pi starts
    Then a notification names the extension config file and the fields "enabled", "colour" and "reserveTokens"

  @rule-P31
  Scenario: a synthesis model that is neither inherit nor provider/model is rejected
    Given the extension config file holds {"synthesisModel": "gpt"}
    When Pi starts
    Then a notification names the extension config file and the field "synthesisModel"

  @rule-P50
  Scenario: the internal safety constants are not config fields
    Given the extension config file holds {"archiveRetention": 3, "minSynthesisTranscriptTokens": 1000}
    When Pi starts
    Then a notification names the extension config file and the fields "archiveRetention" and "minSynthesisTranscriptTokens"

  @rule-P47
  Scenario: automatic behaviour resumes once the config is corrected
    Given the extension config file holds {"synthesisEffort": "extreme"}
    And the user has worked through 2 turns
    When the extension config file is replaced by {"synthesisEffort": "high"}
    And Pi reloads
    And native compaction reaches its threshold
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"

  @rule-P98b
  Scenario: a checkpoint is refused while the extension config is invalid
    Given the extension config file holds {"synthesisEffort": "extreme"}
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then a notification refuses the command naming the extension config file
    And no Continuity Brief was written

  @rule-P98c
  Scenario: a checkpoint is refused while the extension is disabled
    Given the extension config file holds {"enabled": false}
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then a notification refuses the command because the extension is disabled
    And no Continuity Brief was written

  @rule-P105
  Scenario Outline: a disabled extension cancels every native compaction
    Given the extension config file holds {"enabled": false}
    And the user has worked through 3 turns
    When native compaction happens for reason "<reason>"
    Then native compaction was cancelled
    And no compaction entry was persisted
    And no Continuity Brief was written
    And a notification says the compaction was refused because the extension is disabled

    Examples:
      | reason    |
      | threshold |
      | overflow  |
      | manual    |

  @rule-P18a @rule-P29b @rule-P38b @rule-P90f @rule-P91
  Scenario: invalid native settings show the values, the window and the path
    Given the active model has a context window of 100,000 tokens
    And the native settings are reserveTokens 100,000 and keepRecentTokens 2,000
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model
    And that notification shows enabled, reserveTokens 100000, keepRecentTokens 2000, contextWindow 100000 and the project settings path

  @rule-P29a
  Scenario: a reserveTokens of 0 is refused for every window
    Given the native settings are reserveTokens 0 and keepRecentTokens 2,000
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model

  @rule-P30a
  Scenario: a keepRecentTokens of 0 is refused
    Given the native settings are reserveTokens 50,000 and keepRecentTokens 0
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model

  @rule-P30b
  Scenario: keepRecentTokens must stay below the window minus reserveTokens
    Given the native settings are reserveTokens 50,000 and keepRecentTokens 150,000
    When Pi starts
    Then a notification refuses: native compaction settings are invalid for the current model

  @rule-P134
  Scenario: status agrees with the refusal about the restart
    Given the active model has a context window of 100,000 tokens
    And the native settings are reserveTokens 100,000 and keepRecentTokens 2,000
    When the user runs "/continuity status"
    Then the status output says it is refused
    And the status output does not say "Restart required: no"

  @rule-P135
  Scenario: a project settings file that is not valid JSON is reported, and compaction cancelled
    Given the project settings file holds the text "{ \"compaction\": "
    And the user has worked through 3 turns of 60,000 characters each
    Then a notification names the project settings path and says it is not valid JSON
    When the user runs "/continuity status"
    Then the status output names the project settings path and says it is not valid JSON
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no Continuity Brief was written

  @rule-P135
  Scenario: a project settings file that is JSON but not an object is reported, and compaction cancelled
    Pi reads settings as an object; a list parses, yet holds no settings (an outside mutant that
    took any parseable file for valid survived the truncated-JSON scenario above).
    Given the project settings file holds the text "[]"
    And the user has worked through 3 turns of 60,000 characters each
    Then a notification names the project settings path and says it is not valid JSON
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no Continuity Brief was written

  @rule-P90e
  Scenario: a refusal reason with a line break still gives the one failure sentence
    The config names a field whose name holds a line break: §11's failure message is one line.
    Given the extension config file holds {"a\nb": 1}
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And a notification says Pi Session Continuity failed and native compaction was cancelled

  @rule-P133
  Scenario Outline: nothing announces a durable Brief in a refused state
    Given <refused state>
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then native compaction was cancelled
    And no notification said a durable Brief is being prepared

    Examples:
      | refused state                                             |
      | the extension config file holds {"enabled": false}        |
      | the extension config file holds {"synthesisEffort": "x"}  |
      | the native settings are invalid for the active model      |
      | the project is not trusted                                |

  @rule-P133
  Scenario: an overflow compaction announces no threshold
    Given the user has worked through 2 turns
    When the provider rejects the next request because it exceeds the context window
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "overflow"
    And no notification said a durable Brief is being prepared

  @rule-P36a
  Scenario Outline: the effort labels are exact: another spelling is refused
    Given the extension config file holds {"synthesisEffort": "<effort>"}
    When Pi starts
    Then a notification names the extension config file and the field "synthesisEffort"

    Examples:
      | effort |
      | High   |
      | MEDIUM |

  @rule-P31
  Scenario Outline: a synthesis model id with an empty provider or model part is rejected
    Given the extension config file holds {"synthesisModel": "<model>"}
    When Pi starts
    Then a notification names the extension config file and the field "synthesisModel"

    Examples:
      | model   |
      | openai/ |
      | /gpt-4o |
      |         |
