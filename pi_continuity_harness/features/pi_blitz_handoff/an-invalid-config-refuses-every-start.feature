@blitz
Feature: an-invalid-config-refuses-every-start
  Every settings key is validated when the config is loaded. An invalid config file is a loud
  error: every start is refused with the reason (the key), and the file is never rewritten
  automatically. An older config with retired keys loads, normalised in memory only
  (reference: Settings; Legacy config).

  @rule-H106
  Scenario Outline: an invalid <key> refuses every start and the file is left as written
    Given the handoff settings are <settings>
    When the user runs "/sh start"
    Then the start was refused with a notification naming "<key>"
    And the handoff config file is as the user wrote it

    @rule-H96
    Examples: automaticSessionHandoff must be a boolean
      | key                     | settings                           |
      | automaticSessionHandoff | {"automaticSessionHandoff": "yes"} |

    @rule-H97
    Examples: deferPromptsFrom accepts only request or writing
      | key              | settings                        |
      | deferPromptsFrom | {"deferPromptsFrom": "later"}   |

    @rule-H98
    Examples: deleteHandoffAfterReading must be a boolean
      | key                       | settings                         |
      | deleteHandoffAfterReading | {"deleteHandoffAfterReading": 1} |

    @rule-H94b
    Examples: contextWarningPercent is at least 1
      | key                   | settings                     |
      | contextWarningPercent | {"contextWarningPercent": 0} |

    @rule-H95b
    Examples: criticalWarningPercent is at most 100
      | key                    | settings                         |
      | criticalWarningPercent | {"criticalWarningPercent": 101}  |

    @rule-H99b
    Examples: automaticSessionHandoffPercent is 0..100
      | key                            | settings                                |
      | automaticSessionHandoffPercent | {"automaticSessionHandoffPercent": 101} |

    @rule-H100b
    Examples: readinessRetrySeconds is an integer 1..300
      | key                   | settings                       |
      | readinessRetrySeconds | {"readinessRetrySeconds": 301} |

    @rule-H101b
    Examples: maxSessionChainLength is a positive integer
      | key                   | settings                     |
      | maxSessionChainLength | {"maxSessionChainLength": 0} |

    @rule-H102b
    Examples: recoveryDirectory is absolute
      | key               | settings                              |
      | recoveryDirectory | {"recoveryDirectory": "relative/dir"} |

    @rule-H103
    Examples: templateDirectory is null or absolute
      | key               | settings                          |
      | templateDirectory | {"templateDirectory": "rel/tpl"}  |

    @rule-H104b
    Examples: callTemplate and handoffTemplate are role file names, never paths
      | key             | settings                              |
      | callTemplate    | {"callTemplate": "sub/call_x.cmpl"}   |
      | handoffTemplate | {"handoffTemplate": "notes.txt"}      |
      | handoffTemplate | {"handoffTemplate": "call_default.cmpl"} |
      | callTemplate    | {"callTemplate": "handoff_default.cmpl"} |

    @rule-H119
    Examples: retired values are validated, unknown keys and debugging are errors
      | key            | settings                  |
      | writerAttempts | {"writerAttempts": "x"}   |
      | writerRetryDelaySeconds | {"writerRetryDelaySeconds": "x"} |
      | debugging      | {"debugging": true}       |
      | debugging      | {"debugging": false}      |
      | speedMode      | {"speedMode": false}      |
      | bogus          | {"bogus": 1}              |

  @rule-H120
  Scenario: an explicit save of an older config writes the current schema only
    Given the handoff settings are {"prepareWhileWaiting": true, "writerAttempts": 3, "writerRetryDelaySeconds": 5, "readinessRetrySeconds": 45}
    When the user sets "readinessRetrySeconds" to "5" in /sh settings
    Then the handoff config file holds "readinessRetrySeconds" = 5
    And the handoff config file names none of "prepareWhileWaiting", "writerAttempts" and "writerRetryDelaySeconds"

  @rule-H118 @rule-H120
  Scenario: an older config with retired keys loads and is not rewritten
    Given the handoff settings are {"prepareWhileWaiting": true, "writerAttempts": 3, "writerRetryDelaySeconds": 5, "readinessRetrySeconds": 45}
    When the user runs "/sh start"
    Then the status widget now shows "Waiting for Session Handoff"
    And the status widget never showed "Inputs deferred"
    And the handoff config file is as the user wrote it
