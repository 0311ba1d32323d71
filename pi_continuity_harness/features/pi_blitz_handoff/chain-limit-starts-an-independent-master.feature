@blitz
Feature: chain-limit-starts-an-independent-master
  maxSessionChainLength counts the master; at the limit the next transfer starts an
  independent master session without a parent link, with the same prompts (reference:
  Managed paths, chain).

  @rule-H121 @rule-H122 @rule-H39a
  Scenario: chain-limit-starts-an-independent-master
    Given the handoff settings are {"maxSessionChainLength": 1}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new independent master session
    And the receiver's first prompt names the dossier's absolute path and nothing of the source history
    And the receiver read the whole dossier
    And the bootstrap prompt tells the receiver to read the entire dossier, past any truncation

  @rule-H121 @rule-H122
  Scenario: the chain is counted from the persisted headers after the user resumes a receiver
    The receiver is left for a new session and resumed (`/resume`, RPC `switch_session`): a new
    runtime with no memory of the transfer. Its header still links the master, so with a limit
    of 2 its own transfer starts an independent master.
    Given the handoff settings are {"maxSessionChainLength": 2}
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    When the user starts a new session and then resumes the previous one
    And the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new independent master session

  @rule-H123 @rule-H65
  Scenario: an ancestor the count needs but cannot read fails the transfer visibly
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    Given the first source session file is removed
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi stayed in the receiver session
    And a notification was shown
    And the status widget no longer shows an active handoff
    When the user asks "is the transfer done?" and the model answers
    Then the model was asked "is the transfer done?"

  @rule-H107
  Scenario: a child session hands off itself, never its parent
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    When the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new session whose header links to the source session
    And the receiver's first prompt names the dossier's absolute path and nothing of the source history
    And the receiver read the whole dossier

  @rule-H101a
  Scenario: by default the 25th session of a chain hands over to an independent master
    When the user hands off 24 times in a row, each switch linked to its source
    And the user runs "/sh start" and the model writes the handoff and finishes it
    Then Pi switched to a new independent master session
