@rules
Feature: settings-menu
  /continuity settings (and bare /continuity, with a UI) opens one menu: extension enabled,
  native compaction setup for the current model, synthesis model, synthesis effort, artifact
  directory. Every write needs an explicit confirmation; a synthesisModel "inherit" comes with
  a warning about its budget; percentages that give invalid tokens are refused; rounding is
  JavaScript's; the merge is atomic and never overwrites a file it cannot parse; global
  settings and modelOverrides count; Pi's prepared settings, not the file, decide a handoff
  (spec §6, §12, §13, §18).

  @rule-P94 @rule-P99
  Scenario: bare /continuity opens the settings menu
    When the user runs "/continuity" and dismisses the menu
    Then the menu offered extension enabled, native compaction setup, synthesis model, synthesis effort and artifact directory

  @rule-P42b
  Scenario: a config field is written only after an accepted confirmation
    When the user sets the synthesis effort to "high" in /continuity settings and declines
    Then the user was asked to confirm writing the extension config
    And no file was written in the project
    When the user sets the synthesis effort to "high" in /continuity settings and confirms
    Then the extension config file holds "synthesisEffort" = "high"

  @rule-P141
  Scenario: a config field that cannot be written is reported as not written, never as saved
    The config already holds an invalid field, so merging another one into it would write an
    invalid config: the change is refused, and the user is told so rather than that it was saved.
    Given the extension config file holds {"enabled": "yes"}
    When the user sets the synthesis effort to "high" in /continuity settings and confirms
    Then a notification says the settings were not written
    And no notification says the extension config was saved
    And the extension config file holds "enabled" = "yes"

  @rule-P141
  Scenario: a config file that is not a JSON object is refused by the menu, never overwritten
    The file parses, but as a list: merging a field into it would replace the user's file with
    an object of one field (an outside mutant did, and said it saved).
    Given the extension config file holds the text "[\"enabled\"]"
    When the user sets the synthesis effort to "high" in /continuity settings and confirms
    Then a notification says the settings were not written
    And no notification says the extension config was saved
    And the extension config file is byte-for-byte unchanged

  @rule-P15
  Scenario: a write that changes only keepRecentTokens still needs a restart
    86.5591 % of 372,000 tokens leaves the live reserve of 50,000 as it is; only keepRecentTokens
    changes (2,000 to 55,800), and Pi reads it only at its next start.
    Given the active model has a context window of 372,000 tokens
    And the native settings are reserveTokens 50,000 and keepRecentTokens 2,000
    When the user sets up native compaction at 86.5591% trigger and 15% keep-recent and confirms
    And the user runs "/continuity status"
    Then the status output has a line beginning "Restart required: yes"

  @rule-P35
  Scenario: choosing synthesisModel inherit warns about its budget near the threshold
    When the user sets the synthesis model to "inherit" in /continuity settings and declines
    Then the dialogs warned that inherit can spend context or output budget near the threshold

  @rule-P102
  Scenario Outline: percentages that give invalid tokens are refused and nothing is written
    When the user sets up native compaction at <trigger>% trigger and <keep>% keep-recent and confirms
    Then a notification refused the percentages
    And the project settings file is byte-for-byte unchanged

    Examples:
      | trigger | keep |
      | 100     | 15   |
      | 75      | 80   |

  @rule-P102
  Scenario: percentages in range whose rounded tokens are invalid are refused and nothing is written
    Both percentages are in range and keep-recent is below the trigger, but at a 1,000-token
    window both round to 500 tokens: keepRecentTokens would equal the trigger boundary.
    Given the active model has a context window of 1,000 tokens
    When the user sets up native compaction at 50.04% trigger and 49.96% keep-recent and confirms
    Then a notification refused the percentages
    And the project settings file is byte-for-byte unchanged

  @rule-P101b
  Scenario: a half token rounds up, as JavaScript's Math.round does
    Given the active model has a context window of 200,010 tokens
    When the user sets up native compaction at 75% trigger and 5% keep-recent and confirms
    Then the project settings file sets compaction enabled true, reserveTokens 50002 and keepRecentTokens 10001

  @rule-P101b
  Scenario: the tokens are rounded from the exact decimals the user typed, not from binary floats
    The exact products are 643.5 and 161.5 tokens, which round up to 644 and 162; in binary
    floating point (JavaScript's 1000 * 64.35 / 100) they are 643.4999... and 161.4999..., which
    round down.
    Given the active model has a context window of 1,000 tokens
    When the user sets up native compaction at 64.35% trigger and 16.15% keep-recent and confirms
    Then the project settings file sets compaction enabled true, reserveTokens 356 and keepRecentTokens 162

  @needs-fs-faults @rule-P44a
  Scenario: the settings merge replaces the file atomically
    Given the project settings file holds unrelated settings:
      """
      {"theme": "dark", "compaction": {"enabled": true, "reserveTokens": 50000, "keepRecentTokens": 2000}}
      """
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    Then the project settings file was replaced by a rename, never written in place

  @rule-P44b
  Scenario: a project settings file that cannot be parsed is never overwritten
    Given the project settings file holds the text "{ \"theme\": \"dark\", "
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    Then the project settings file is byte-for-byte unchanged
    And a notification says the settings were not written

  @rule-P48
  Scenario: global settings and the active model's override count
    Given the active model has a context window of 372,000 tokens
    And the project settings file holds unrelated settings:
      """
      {"compaction": {"modelOverrides": {"fake/fake-model": {"reserveTokens": 74400}}}}
      """
    And the global settings hold compaction reserveTokens 93,000 and keepRecentTokens 55,800
    When the user runs "/continuity status"
    Then the status output shows the model window 372,000, reserve 74,400, effective trigger 297,600 at approximately 80.0% and keep recent 55,800 at approximately 15.0%

  @rule-P48 @rule-P97a
  Scenario: a checkpoint records the active model's override, as the status shows it
    Given the active model has a context window of 372,000 tokens
    And the project settings file holds unrelated settings:
      """
      {"compaction": {"modelOverrides": {"fake/fake-model": {"reserveTokens": 74400}}}}
      """
    And the global settings hold compaction reserveTokens 93,000 and keepRecentTokens 55,800
    And the user has worked through 2 turns
    When the user runs "/continuity checkpoint"
    Then the checkpoint was accepted
    And the checkpoint Brief's frontmatter records reserveTokens 74,400 and keepRecentTokens 55,800

  @rule-P49
  Scenario: Pi's prepared settings, not the file on disk, decide and are recorded
    Given the user has worked through 2 turns
    When the project settings file is edited outside Pi to reserveTokens 250,000
    And native compaction reaches its threshold
    Then the persisted compaction summary is a valid schema-v2 Brief with handoffReason "threshold"
    And the Brief's frontmatter records reserveTokens 50000

  @rule-P43
  Scenario: the settings merge keeps the compaction keys it does not know
    Given the active model has a context window of 200,000 tokens
    And the project settings file holds unrelated settings:
      """
      {"compaction": {"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000, "futureOption": {"kept": true}}}
      """
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    Then the project settings file sets compaction enabled true, reserveTokens 50000 and keepRecentTokens 30000
    And every unrelated project setting is unchanged

  @rule-P123a
  Scenario: the native setup turns a disabled native compaction back on
    Native auto-compaction disabled is a refused state (spec §18); the setup is how the user
    leaves it, and spec §12 merges {"compaction": {"enabled": true, ...}}: a merge that keeps
    enabled false writes tokens Pi never uses and leaves the extension refused after the restart.
    Given the active model has a context window of 200,000 tokens
    And native compaction is disabled in the project settings
    When the user sets up native compaction at 75% trigger and 15% keep-recent and confirms
    Then the project settings file sets compaction enabled true, reserveTokens 50000 and keepRecentTokens 30000
    When Pi restarts
    And the user runs "/continuity status"
    Then the status output names the product and says it is armed
