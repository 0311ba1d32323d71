@blitz
Feature: a-failed-or-aborted-get-authorises-nothing
  A failed or aborted template retrieval (GET) neither starts Writing capture nor authorises
  Finish; the reservation an aborted GET made may be reused by the next GET of the same request:
  it is not a successful retrieval (reference: Transfer sequence 4). A GET is aborted while it
  executes (Pi hands the tool its run's AbortSignal, pi-agent-core dist/agent-loop.js:574): the
  abort lands right after its reservation write, which only the simulator can place; a failed
  GET is a failed reservation write, which real Pi plays too.

  @needs-fs-faults @rule-H25a
  Scenario: a failed template retrieval does not start Writing capture
    Given reserving the dossier will fail
    And the handoff settings are {"deferPromptsFrom": "writing"}
    When the user runs "/sh start" and the model asks for the template
    And the user then asks "is the handoff still pending?" and the model answers
    Then the template request was not answered with a template
    And "is the handoff still pending?" reached the source model

  @needs-trace-faults @rule-H25a
  Scenario: an aborted template retrieval does not start Writing capture
    Given the template retrieval will be aborted while it reserves the dossier
    And the handoff settings are {"deferPromptsFrom": "writing"}
    When the user runs "/sh start" and the model asks for the template
    And the user then asks "is the handoff still pending?" and the model answers
    Then the template request was not answered with a template
    And "is the handoff still pending?" reached the source model

  @needs-fs-faults @rule-H25b
  Scenario: a failed template retrieval does not authorise Finish
    Given reserving the dossier will fail
    When the user runs "/sh start" and the model asks for the template
    And the model then writes the dossier and calls Finish with any ID a template response gave it
    Then the template request was not answered with a template
    And the Finish call was rejected
    And Pi did not switch sessions

  @needs-trace-faults @rule-H25b
  Scenario: an aborted template retrieval does not authorise Finish
    Given the template retrieval will be aborted while it reserves the dossier
    When the user runs "/sh start" and the model asks for the template
    And the model then writes the dossier and calls Finish with any ID a template response gave it
    Then the template request was not answered with a template
    And the Finish call was rejected
    And Pi did not switch sessions

  @needs-trace-faults @rule-H25c
  Scenario: the reservation of an aborted template retrieval is reused by the next one
    Given the template retrieval will be aborted while it reserves the dossier
    When the user runs "/sh start" and the model asks for the template
    And the model then asks for the template again, writes the dossier and finishes
    Then the template request was not answered with a template
    And the second template request succeeded with the reserved dossier file
    And Pi switched to a new session whose header links to the source session
