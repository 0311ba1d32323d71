@smoke
Feature: compaction-summary-is-disk-brief
  session_before_compact returns the exact re-read bytes of the saved Brief as the custom
  summary, with Pi's prepared firstKeptEntryId and tokensBefore, and details that correlate
  event, path and SHA-256 hash (spec §3, §8, §18, §15 smoke 5, §20.5).

  @rule-P2 @rule-P19a @rule-P25a @rule-P39 @rule-P51a @rule-P61a @rule-P62 @rule-P64h @rule-P66b @rule-P67 @rule-P68a @rule-P68b @rule-P68c @rule-P69a @rule-P69b @rule-P69c @rule-P76a @rule-P77 @rule-P124
  Scenario: compaction-summary-is-disk-brief
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the persisted compaction entry comes from an extension
    And its summary is a valid schema-v2 Brief for this session with handoffReason "threshold"
    And the summary is the Brief the extension wrote on disk
    And its details carry the continuityEventId and artifactPath of that Brief and the SHA-256 of the summary
    And its details carry the session id, the handoff reason and the effective native settings
    And it keeps the firstKeptEntryId and tokensBefore that Pi prepared
    And the archived Brief on disk is the summary with only its status and updatedAt changed
    And the Brief was created before the compaction entry was appended
    And the next model request carries the summary exactly inside Pi's compaction wrapper

  Scenario: each Brief is unique, so Pi's summary lookup finds the right entry
    Given the user has worked through 2 turns
    When native compaction reaches its threshold
    And the user works through 2 more turns
    And native compaction reaches its threshold again
    Then the two compaction summaries are Briefs of this session with different eventIds
    And each session_compact event was given the entry with its own summary

  Scenario Outline: the summary is the disk Brief for every compaction reason
    Given the user has worked through 3 turns
    When native compaction happens for reason "<reason>"
    Then Pi invoked session_before_compact with reason "<reason>"
    And its summary is a valid schema-v2 Brief for this session with handoffReason "<handoff_reason>"
    And the summary is the Brief the extension wrote on disk
    And its details carry the continuityEventId and artifactPath of that Brief and the SHA-256 of the summary
    And its details carry the session id, the handoff reason and the effective native settings
    And it keeps the firstKeptEntryId and tokensBefore that Pi prepared
    And the archived Brief on disk is the summary with only its status and updatedAt changed

    @rule-P2 @rule-P19a @rule-P63 @rule-P66b @rule-P68a @rule-P68b @rule-P68c @rule-P124
    Examples: threshold
      | reason    | handoff_reason    |
      | threshold | threshold         |

    @rule-P2 @rule-P5a @rule-P6b @rule-P19b @rule-P63 @rule-P66b @rule-P68a @rule-P68b @rule-P68c @rule-P124
    Examples: overflow
      | reason    | handoff_reason    |
      | overflow  | overflow          |

    @rule-P2 @rule-P6b @rule-P19c @rule-P63 @rule-P66b @rule-P68a @rule-P68b @rule-P68c @rule-P69b @rule-P124
    Examples: manual
      | reason    | handoff_reason    |
      | manual    | manual-compaction |

  @rule-P68c @rule-P2
  Scenario: the details' SHA-256 is of the summary's UTF-8 bytes, non-ASCII text included
    A Brief records the user's own words, which need not be ASCII; a hash of anything but the
    exact UTF-8 bytes (text with accents dropped, another encoding) agrees with the summary only
    while the Brief happens to be ASCII.
    Given the synthesis model's Next Actions say "1. Vérifier le résumé « café » — naïve → 完了 ✓"
    And the user has worked through 2 turns
    When native compaction reaches its threshold
    Then the summary is the Brief the extension wrote on disk
    And its details carry the continuityEventId and artifactPath of that Brief and the SHA-256 of the summary
    And the persisted compaction summary contains "Vérifier le résumé « café » — naïve → 完了 ✓"
