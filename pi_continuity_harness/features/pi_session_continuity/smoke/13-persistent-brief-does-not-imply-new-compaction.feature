@smoke
Feature: persistent-brief-does-not-imply-new-compaction
  A Brief that stays in later context is historical evidence of one handoff. Its Recovery
  Instructions carry the event-freshness rule, inserted deterministically and once, and the
  synthesis prompt carries the freshness and authority-boundary rules; only a new event or a
  newer eventId permits a new compaction announcement (spec §9, §14, §15 smoke 13).

  @rule-P19a @rule-P78 @rule-P79a @rule-P80b @rule-P80c @rule-P114a @rule-P115a @rule-P116 @rule-P140
  Scenario: persistent-brief-does-not-imply-new-compaction
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user sends a short prompt
    And Pi reloads
    Then the Brief's Recovery Instructions state the event-freshness rule exactly once
    And the synthesis request stated the event-freshness rule and the authority-boundary rule
    And the synthesis request was phrased as the state of the work
    And only one compaction entry was persisted
    And no notification announced a second compaction

  @rule-P64i @rule-P118a
  Scenario: a newer handoff carries a newer eventId
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user works through 2 more turns
    And native compaction reaches its threshold again
    Then the second Brief has a different eventId and a later createdAt than the first
    And the second synthesis request was given the first Brief only as transcript evidence

  @rule-P118a
  Scenario: a manual compaction's Brief is evidence for the next synthesis
    A manual /compact submits no continuation, so its Brief is in no later message: the next
    synthesis sees it only if the earlier summary Pi prepared is passed on as evidence.
    Given the user has worked through 2 turns
    When the user compacts the session manually
    And the user works through 2 more turns
    And native compaction reaches its threshold
    Then the second synthesis request was given the first Brief only as transcript evidence
