@failures
Feature: pinet-846-no-compaction-from-turn-end
  Source: gugu91/pinet PR #846 (and k0valik/pi-blackhole PR #50): compacting from turn_end gave
  an aborted response, because ctx.compact() aborts the running run first (pi-host-1.6 §9.1).
  Proves: the extension computes no threshold of its own and never calls ctx.compact(): below
  Pi's native threshold nothing is compacted and no run is aborted; at a mid-run check point the
  native compaction does not abort the run either (spec §13, §18).

  @rule-P13a @rule-P13b
  Scenario: below the native threshold, no compaction and no aborted run
    Given the user has worked through 5 turns
    Then Pi did not invoke session_before_compact
    And no compaction entry was persisted
    And no run was aborted
    And the footer status reads "Continuity @ ~75.0%"

  @rule-P13a @rule-P19a @rule-P121
  Scenario: a mid-run native compaction does not abort the run
    Given the user has worked through 2 turns
    When the model calls a tool and reports 150,001 context tokens, then answers
    Then no run was aborted
    And the compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
