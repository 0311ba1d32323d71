@blitz @host
Feature: tree-navigation-is-pis-own
  Host behaviour the tree-navigation guard relies on (an implementation that does nothing passes
  these; they measure the Pi release, not the implementation): navigating to a user message puts
  the leaf on its parent and tells the extensions (session_tree), and Pi itself refuses a
  navigation while a turn streams (dist/core/agent-session.js:3370-3376, 3466-3470, 3518-3524).
  The operation is the observer's /harness-tree command on real Pi (RPC has no tree command).

  Scenario: navigating to a user message moves the leaf to its parent
    Given the user has worked through 2 turns
    When the user navigates the session tree to the last user message
    Then Pi moved the leaf to that message's parent and told the extensions

  @needs-held-model-calls
  Scenario: Pi refuses tree navigation while a turn streams
    Given the user has worked through 1 turn
    When the user navigates the session tree while the model's reply is held
    Then Pi refused the navigation: "Wait for the current response to finish before navigating the session tree."
