"""Steps added for the rule catalogue (issue 10): each checks one rule of the catalogue against
any implementation, and fails when the effect it names is absent.

Grouped by what they observe: command output without a UI, the status panel, the extension
config, synthesis, artifacts and frontmatter, failed postmortems, the synthesis prompt.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_bdd import given, parsers, then, when

from pi_continuity_harness.api.extension_api import CONFIG_DIR_NAME
from pi_continuity_harness.features.collect import checks_arguments
from pi_continuity_harness.features.oracle import (
    ARTIFACT_EVENT_NAME,
    MESSAGE_PREFIX,
    SAFE_PATH_COMPONENT,
    brief_problems,
    current_state_snapshot_problem,
    failure_record_problems,
    freshness_rule_paragraphs,
    freshness_statements_missing,
    frontmatter_order_problem,
    headings_listed_problem,
    inference_forbidden_problem,
    line_says,
    parse_brief,
    records_phase,
    section,
    status_lines,
)
from pi_continuity_harness.features.steps.common import (
    begin,
    briefs_in,
    json_argument,
    new_command_output,
    new_dialogs,
    new_notifications,
    new_requests,
    number,
    status_output,
    text_mentions_number,
)
from pi_continuity_harness.features.steps.then import _find_notification, _without_workdir
from pi_continuity_harness.features.world import World, project_files
from pi_continuity_harness.scenario.model_script import Reply, SynthesisReply
from pi_continuity_harness.scenario.operations import DialogAnswer, EditFileOp, RestartOp
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.targets import ObservedRequest


def _settings_path(world: World) -> str:
    return str(world.observe().project_dir / CONFIG_DIR_NAME / "settings.json")


# --------------------------------------------------------------------- command output without a UI
def _output(world: World) -> str:
    text = new_command_output(world)
    assert text.strip(), "the command showed nothing (no output without a UI)"
    return text


@then("the command output names the project settings path and the reserve and keep-recent values")
def _output_settings(world: World) -> None:
    """The current values (reserve, keep recent) and the effective one (the trigger boundary,
    window − reserve), with the exact settings path (spec §12 non-interactive mode)."""
    text = _output(world)
    assert _settings_path(world) in text, f"the output does not name {_settings_path(world)}:\n{text}"
    native = world.draft.native()
    for key in ("reserveTokens", "keepRecentTokens"):
        assert text_mentions_number(text, int(native[key])), (
            f"the output does not show {key} {native[key]}:\n{text}"
        )
    trigger = world.current_window() - int(native["reserveTokens"])
    assert text_mentions_number(text, trigger), (
        f"the output does not show the effective trigger {trigger}:\n{text}"
    )


@then(parsers.re(r'the command output begins with "(?P<first>[^"]+)"'))
def _output_begins(world: World, first: str) -> None:
    text = _output(world)
    assert text.lstrip().startswith(first), f"the output does not begin with {first!r}:\n{text}"


@then(
    parsers.re(
        r"the command output shows the status word, the model window (?P<w>\d[\d,]*) and the reserve (?P<r>\d[\d,]*)"
    )
)
def _output_status(world: World, w: str, r: str) -> None:
    text = _output(world)
    assert re.search(r"^Status: \S+", text, re.M), f"no 'Status: <word>' line:\n{text}"
    assert text_mentions_number(text, number(w)) and text_mentions_number(text, number(r)), text


@then("the command output says nothing was written")
def _output_nothing_written(world: World) -> None:
    text = _output(world)
    pattern = r"\b(nothing|not|no)\b[^.\n]*\b(written|saved|changed|mutated|modified)\b|read-only"
    assert re.search(pattern, text, re.I), f"the output does not say that nothing was written:\n{text}"


# --------------------------------------------------------------------- the status panel
def _status(world: World) -> str:
    text = status_output(world)
    assert text.strip(), "the status command showed nothing"
    return text


def _panel(world: World, notifications: list[str] | None = None) -> str:
    """The status panel among what was shown: the text that opens with the product name and
    has a ``Status:`` line (spec §11's block)."""
    texts = notifications if notifications is not None else [status_output(world)]
    for text in texts:
        for start in [m.start() for m in re.finditer(re.escape(MESSAGE_PREFIX), text)]:
            chunk = text[start:]
            if re.match(rf"{re.escape(MESSAGE_PREFIX)}\s*\n\s*Status:", chunk):
                return chunk
    raise AssertionError(
        f"no status panel (a '{MESSAGE_PREFIX}' line followed by 'Status:') was shown:\n{texts}"
    )


@then(
    parsers.re(
        r"the status output begins with the block of spec §11 for window (?P<w>[\d,]+), reserve (?P<r>[\d,]+), "
        r"trigger (?P<t>[\d,]+) at (?P<tp>[\d.]+)% and keep recent (?P<k>[\d,]+) at (?P<kp>[\d.]+)%"
    )
)
def _status_block(world: World, w: str, r: str, t: str, tp: str, k: str, kp: str) -> None:
    expected = [
        MESSAGE_PREFIX,
        "Status: armed",
        f"Model window: {w}",
        f"Reserve: {r}",
        f"Effective trigger: {t} (approximately {tp}%)",
        f"Keep recent: {k} (approximately {kp}%)",
        "Restart required: no",
    ]
    lines = [line.strip() for line in _panel(world).splitlines() if line.strip()]
    assert lines[: len(expected)] == expected, (
        "the status panel does not open with the block of spec §11:\n  expected "
        + "\n           ".join(expected)
        + "\n  shown    "
        + "\n           ".join(lines[: len(expected)])
    )


@then(
    "the status output says the extension is enabled, the project is trusted, the config is valid "
    "and native compaction is enabled"
)
def _status_states(world: World) -> None:
    text = _status(world)
    for label, word in (
        (r"\bextension\b", "enabled"),
        (r"\btrust", "trusted"),
        (r"\bconfig\b", "valid"),
        (r"\bnative compaction\b", "enabled"),
    ):
        assert line_says(text, label, word), f"no line names {label!r} as {word!r}:\n{text}"


@then("the status output says the extension is disabled")
def _status_disabled(world: World) -> None:
    text = _status(world)
    assert line_says(text, r"\bextension\b", "disabled"), f"no line says the extension is disabled:\n{text}"


def _files_of(world: World, kind: str) -> list[str]:
    """Absolute paths of this session's artifact files of one kind (pending, archive, failed)."""
    sid = world.observe().session_id or ""
    directory = world.artifact_dir() / sid / kind
    return sorted(str(p) for p in directory.iterdir() if p.is_file()) if directory.is_dir() else []


@then("the status output names the archived Brief's path")
def _status_archive(world: World) -> None:
    text = _status(world)
    archived = _files_of(world, "archive")
    assert archived, "no Brief was archived"
    assert archived[-1] in text, f"the status does not name the archived Brief {archived[-1]}:\n{text}"


@then("the status output names the failed postmortem's path")
def _status_failed(world: World) -> None:
    text = _status(world)
    failed = _files_of(world, "failed")
    assert failed, "no failed postmortem was written"
    assert failed[-1] in text, f"the status does not name the failed postmortem {failed[-1]}:\n{text}"


@then(parsers.re(r'the status output reports the failure "(?P<error>[^"]+)"'))
def _status_failure(world: World, error: str) -> None:
    text = _status(world)
    assert error in text, f"the status does not report the failure {error!r}:\n{text}"


@then("the status output names no artifact file")
def _status_no_artifact(world: World) -> None:
    text = _status(world)
    root = re.escape(str(world.artifact_dir()))
    named = re.findall(rf"{root}/\S+\.md\b", text)
    assert not named, f"the status names artifact files although none was written for the event: {named}"


@then("the status output names the path of every pending Brief of this session")
def _status_stale(world: World) -> None:
    text = _status(world)
    pending = _files_of(world, "pending")
    assert pending, "no pending Brief exists"
    missing = [path for path in pending if path not in text]
    assert not missing, f"the status does not name the pending Briefs {missing}:\n{text}"


@then(parsers.re(r"the status output was shown as (?P<level>info|a warning or an error)"))
def _status_level(world: World, level: str) -> None:
    """Rules P92a/P92b (spec §11: "Warnings are reserved for disabled, invalid, failed, stale, or
    restart-required states"): a status shown in such a state is itself a warning (or an error),
    not an info that reads like an armed, healthy extension; in a normal state it is an info.
    Found by the third independent mutant round: ``status_info_with_stale`` and
    ``status_info_after_failure`` kept every line and only lowered the level, and
    ``invalid_pending_listed_stale`` listed a legacy artifact as stale, which no step looked at."""
    shown = [(m, k) for m, k in new_notifications(world) if re.search(r"^\s*Status:", m, re.M)]
    assert shown, f"no status panel was notified; notifications were: {new_notifications(world)}"
    allowed = {"info"} if level == "info" else {"warning", "error"}
    wrong = [(m[:300], k) for m, k in shown if k not in allowed]
    assert not wrong, f"the status was shown at the wrong level (expected {level}): {wrong}"


@then("the status output reports a last failure")
def _status_any_failure(world: World) -> None:
    """Rule P95n: status shows the last failure. A refused compaction is notified as a failure
    (spec §11 "Pi Session Continuity failed: ... Native compaction was cancelled."), so the status
    that follows must report one: its failure line names something, not "none". Found by the third
    independent mutant round (``refusal_not_recorded``)."""
    text = _status(world)
    lines, reported = status_lines(text, "failure")
    assert lines, f"the status has no failure line:\n{text}"
    assert reported, f"the status reports no failure after a cancelled compaction: {lines}"


@then("the status shown during the synthesis names the current operation")
def _status_operation(world: World) -> None:
    panel = _panel(world, [message for message, _ in new_notifications(world)])
    assert re.search(r"operation[^\n]*:\s*(?!none\b)\w", panel, re.I), (
        f"the status shown during the synthesis names no current operation:\n{panel}"
    )


@then("the threshold notification came before the status shown during the synthesis")
def _preparing_before_synthesis(world: World) -> None:
    """Rule P90a: "native compaction reached its threshold; preparing durable Brief." announces
    work about to start, so it is shown when the handoff begins, before the synthesis, not once the
    Brief exists. Found by the fourth independent mutant round (``preparing_announced_after_synthesis``
    held the notice back until the Brief was saved: same words, after the fact)."""
    notes = [message for message, _ in new_notifications(world)]
    preparing = [
        i for i, m in enumerate(notes) if re.search(r"native compaction reached its threshold; preparing", m)
    ]
    panels = [i for i, m in enumerate(notes) if re.search(r"^\s*Status:", m, re.M)]
    assert preparing, f"no threshold notification; notifications were: {notes}"
    assert panels, f"no status was shown during the synthesis; notifications were: {notes}"
    assert preparing[0] < panels[0], (
        f"the threshold notification came after the status shown during the synthesis: {notes}"
    )


# --------------------------------------------------------------------- the extension config, refusals
def _config_path(world: World) -> str:
    return str(world.observe().project_dir / CONFIG_DIR_NAME / "session-continuity.json")


@when(parsers.re(r"the extension config file is replaced by (?P<value>\{.*\})"))
@checks_arguments(json_argument("value"))
def _replace_config(world: World, value: str) -> None:
    world.start()
    begin(world)
    json.loads(value)  # a feature error, not the implementation's, when it is not JSON
    op = EditFileOp.model_validate(
        {"edit_file": {"path": f"{CONFIG_DIR_NAME}/session-continuity.json", "text": value + "\n"}}
    )
    outcome = world.perform(op)
    assert outcome.ok, f"editing the extension config failed: {outcome.error}"


@then(
    parsers.re(
        r'a notification names the extension config file and the fields (?P<fields>"\w+"(?:(?:, | and )"\w+")+)'
    )
)
def _config_fields(world: World, fields: str) -> None:
    names = re.findall(r'"(\w+)"', fields)
    message = _find_notification(world, re.escape(_config_path(world)), since_mark=False, paths=True)
    shown = _without_workdir(world, message)
    missing = [name for name in names if not re.search(rf"\b{re.escape(name)}\b", shown)]
    assert not missing, f"the fields {missing} are not named: {message!r}"


@then("a notification refuses the command naming the extension config file")
def _command_refused_config(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}.*{re.escape(_config_path(world))}", paths=True)


@then("a notification refuses the command because the extension is disabled")
def _command_refused_disabled(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}.*\bdisabled\b")


@then("a notification says the compaction was refused because the extension is disabled")
def _compaction_refused_disabled(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}.*\bdisabled\b")


@then("the status output says it is refused")
def _status_refused(world: World) -> None:
    text = _status(world)
    assert re.search(r"^\s*Status:\s*(?!armed\b)\S", text, re.M | re.I), (
        f"the status is not a refused state:\n{text}"
    )


@then(parsers.re(r'the status output does not say "(?P<text>[^"]+)"'))
def _status_not(world: World, text: str) -> None:
    output = _status(world)
    assert text not in output, f"the status says {text!r}:\n{output}"


@then(parsers.re(r'the status output has a line beginning "(?P<text>[^"]+)"'))
def _status_line(world: World, text: str) -> None:
    """A line of the status opens with ``text``: spec §11's block fixes its lines (``Restart
    required: no``), not what may follow them."""
    output = _status(world)
    assert any(line.strip().startswith(text) for line in output.splitlines()), (
        f"no line of the status begins {text!r}:\n{output}"
    )


@given(parsers.re(r'the project settings file holds the text "(?P<text>(?:[^"\\]|\\.)*)"'))
def _settings_text(world: World, text: str) -> None:
    """A project settings file that is exactly ``text`` (Pi drops a file it cannot parse and uses
    its defaults, pi-host §9)."""
    draft = world.require_setup("project settings")
    draft.set_project_settings(None)
    draft.set_file(f"{CONFIG_DIR_NAME}/settings.json", text=text.replace('\\"', '"'))


_NOT_JSON = r"(not valid JSON|invalid JSON|not JSON|JSON[^\n]*(error|invalid)|cannot be parsed|parse error)"


@then("a notification names the project settings path and says it is not valid JSON")
def _settings_not_json_notice(world: World) -> None:
    message = _find_notification(world, re.escape(_settings_path(world)), since_mark=False, paths=True)
    assert re.search(_NOT_JSON, message, re.I), (
        f"the notification does not say the file is not valid JSON: {message!r}"
    )


@then("the status output names the project settings path and says it is not valid JSON")
def _settings_not_json_status(world: World) -> None:
    text = _status(world)
    lines = [
        line
        for line in text.splitlines()
        if _settings_path(world) in line and re.search(_NOT_JSON, line, re.I)
    ]
    assert lines, f"no status line names {_settings_path(world)} as not valid JSON:\n{text}"


@then("no notification said a durable Brief is being prepared")
def _no_preparing(world: World) -> None:
    said = [m for m, _ in new_notifications(world) if re.search(r"preparing durable Brief", m, re.I)]
    assert not said, f"announced a durable Brief: {said}"


# --------------------------------------------------------------------- synthesis model and effort
_LABELS = ("inherit", "minimal", "low", "medium", "high", "xhigh")


@given(
    parsers.re(
        r'another model "(?P<model_id>[^"]+)" has a context window of (?P<n>\d[\d,]*) tokens and no API key'
    )
)
def _keyless_model(world: World, model_id: str, n: str) -> None:
    draft = world.require_setup("another model")
    draft.add_model(model_id, number(n))
    next(m for m in draft.data["models"] if m["id"] == model_id)["auth"] = False


@given(parsers.re(r'the session thinking level is "(?P<level>[a-z]+)"'))
def _thinking_level(world: World, level: str) -> None:
    world.require_setup("the thinking level").data["thinking_level"] = level


def _synthesis_requests(world: World) -> list[ObservedRequest]:
    requests = new_requests(world, "extension")
    assert requests, "no synthesis request was made"
    return requests


@then(parsers.re(r'every synthesis request went to "(?P<model_id>[^"]+)"'))
def _synthesis_model_used(world: World, model_id: str) -> None:
    models = [r.request.model for r in _synthesis_requests(world)]
    assert set(models) == {model_id}, f"synthesis requests went to {models}, expected {model_id}"


@then("no synthesis request was made")
def _no_synthesis(world: World) -> None:
    made = new_requests(world, "extension")
    assert not made, f"{len(made)} synthesis requests were made (to {[r.request.model for r in made]})"


@then(parsers.re(r'a notification says Pi Session Continuity failed, naming "(?P<text>[^"]+)"'))
def _failed_naming(world: World, text: str) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)} failed: .*{re.escape(text)}")


@then(parsers.re(r'the synthesis request asked for reasoning "(?P<level>[a-z]+)"'))
def _reasoning_requested(world: World, level: str) -> None:
    asked = [r.request.reasoning for r in _synthesis_requests(world)]
    assert asked[-1] == level, f"the synthesis request asked for reasoning {asked[-1]!r}, expected {level!r}"


@then(parsers.re(r"the synthesis request asked for at most (?P<n>\d[\d,]*) output tokens"))
def _output_cap(world: World, n: str) -> None:
    """Rule P23 (spec §5): the synthesis reserves output for reasoning *within* the model's output
    limit; Pi passes ``maxTokens`` to the provider unclamped (with reasoning, fitted into the
    window only, never to the model's limit: api/simple-options.js:13-23), and a provider refuses a request
    above the model's limit, so a budget that ignores the cap fails every synthesis on such a
    model. Found by the third independent mutant round (``output_budget_uncapped``)."""
    requests = _synthesis_requests(world)
    assert requests, "no synthesis request was made"
    limit = number(n)
    over = [
        r.request.max_tokens for r in requests if r.request.max_tokens is None or r.request.max_tokens > limit
    ]
    assert not over, f"synthesis requests asked for {over} output tokens, above the model's limit {limit}"


@given(
    parsers.re(
        r'another model "(?P<model_id>[^"]+)" reasons, with a context window of (?P<n>\d[\d,]*) tokens '
        r"and an output limit of (?P<limit>\d[\d,]*) tokens"
    )
)
def _another_reasoning_model(world: World, model_id: str, n: str, limit: str) -> None:
    world.require_setup("another model").add_model(
        model_id, number(n), max_tokens=number(limit), reasoning=True
    )


@then(parsers.re(r"the synthesis request asked for at least (?P<n>\d[\d,]*) output tokens"))
def _output_kept(world: World, n: str) -> None:
    """Rule P23 (spec §5): synthesis reserves enough output budget for reasoning. What the
    request asks for on the wire is what counts: a synthesis with reasoning goes through pi-ai's
    ``streamSimple``, which lowers ``max_tokens`` to what the window leaves beside its estimate
    of the input (3.5 characters a token) and a margin (api/simple-options.js:13-23). A
    transcript sized without that margin had its budget cut to 3,079 tokens on real Pi and the
    Brief cut off (differential exploration, seed 28; ``transcript_sized_without_pi_ai_margin``)."""
    requests = _synthesis_requests(world)
    assert requests, "no synthesis request was made"
    least = number(n)
    short = [
        r.request.max_tokens for r in requests if r.request.max_tokens is None or r.request.max_tokens < least
    ]
    assert not short, f"synthesis requests asked for {short} output tokens on the wire, below {least}"


@then(parsers.re(r'the persisted compaction summary does not contain "(?P<text>[^"]+)"'))
def _summary_without(world: World, text: str) -> None:
    """Rule P2: the summary is the re-read Brief, whose body is the synthesis reply's Markdown
    text; what the model reasoned on the way is not part of it."""
    summary = str(world.latest_compaction().get("summary", ""))
    assert summary, "no compaction summary was persisted"
    assert text not in summary, f"the compaction summary contains {text!r}"


@then(parsers.re(r'the persisted compaction summary contains "(?P<text>[^"]+)"'))
def _summary_with(world: World, text: str) -> None:
    """The scripted text reached the summary as it was written (a scenario about its bytes, such
    as the non-ASCII SHA-256 one of smoke 05, is then not vacuous)."""
    summary = str(world.latest_compaction().get("summary", ""))
    assert summary, "no compaction summary was persisted"
    assert text in summary, f"the compaction summary does not contain {text!r}"


def _summary_frontmatter(world: World) -> dict[str, Any]:
    return dict(world.latest_summary_brief().frontmatter)


@then(
    parsers.re(r'the Brief\'s frontmatter records modelId "(?P<a>[^"]+)" and synthesisModel "(?P<b>[^"]+)"')
)
def _frontmatter_models(world: World, a: str, b: str) -> None:
    front = _summary_frontmatter(world)
    assert (front.get("modelId"), front.get("synthesisModel")) == (a, b), (
        f"modelId {front.get('modelId')!r}, synthesisModel {front.get('synthesisModel')!r}; expected {a!r}, {b!r}"
    )


@then(parsers.re(r'the Brief\'s frontmatter records synthesisEffort "(?P<label>[a-z]+)"'))
def _frontmatter_effort(world: World, label: str) -> None:
    recorded = _summary_frontmatter(world).get("synthesisEffort")
    assert recorded == label, f"synthesisEffort is {recorded!r}, expected {label!r}"


@then("the Brief's frontmatter records a synthesisEffort among inherit, minimal, low, medium, high, xhigh")
def _frontmatter_effort_label(world: World) -> None:
    recorded = _summary_frontmatter(world).get("synthesisEffort")
    assert recorded in _LABELS, f"synthesisEffort is {recorded!r}, not one of the spec's labels {_LABELS}"


# --------------------------------------------------------------------- the settings menu
def _dialog_text(dialog: dict[str, Any]) -> str:
    parts = [str(dialog.get(key) or "") for key in ("title", "message")]
    parts += [str(option) for option in dialog.get("options") or []]
    return "\n".join(parts)


@when('the user runs "/continuity" and dismisses the menu')
def _dismiss_menu(world: World) -> None:
    world.start()
    begin(world)
    world.command("/continuity", [DialogAnswer(cancel=True)])


_MENU_ITEMS = {
    "extension enabled": r"\benabl",
    "native compaction setup": r"\bcompaction\b",
    "synthesis model": r"\bmodel\b",
    "synthesis effort": r"\beffort\b",
    "artifact directory": r"\b(artifact|directory)\b",
}


@then(
    "the menu offered extension enabled, native compaction setup, synthesis model, synthesis effort "
    "and artifact directory"
)
def _menu_offered(world: World) -> None:
    selects = [d for d in new_dialogs(world) if d.get("method") == "select"]
    assert selects, "no menu (select dialog) was opened"
    options = [str(option) for option in selects[0].get("options") or []]
    unused = list(options)
    for item, pattern in _MENU_ITEMS.items():
        match = next((option for option in unused if re.search(pattern, option, re.I)), None)
        assert match is not None, f"the menu offers no option for {item}: {options}"
        unused.remove(match)


def _settings_field(world: World, topic: str, value: str, decision: str) -> None:
    world.start()
    begin(world)
    answers = [
        DialogAnswer(select=f"/{topic}/", when=topic),
        DialogAnswer(select=value, when=topic),
        DialogAnswer(confirm=decision == "confirms", when="."),
    ]
    world.command("/continuity settings", answers)


@when(
    parsers.re(
        r'the user sets the synthesis (?P<topic>effort|model) to "(?P<value>[^"]+)" in /continuity settings '
        r"and (?P<decision>confirms|declines)"
    )
)
def _set_field(world: World, topic: str, value: str, decision: str) -> None:
    _settings_field(world, f"synthesis {topic}", value, decision)


@then("no notification says the extension config was saved")
def _config_not_saved(world: World) -> None:
    """Rule P141: a config write that failed is never announced as saved. Found by the fourth
    independent mutant round (``config_write_failure_reported_saved`` dropped the write's error and
    said "extension config saved" for a file it had not changed)."""
    saved = [m for m, _ in new_notifications(world) if re.search(r"config[^.]*\bsaved\b", m, re.I)]
    assert not saved, f"a notification says the extension config was saved: {saved}"


@then("the user was asked to confirm writing the extension config")
def _asked_to_confirm(world: World) -> None:
    confirms = [d for d in new_dialogs(world) if d.get("method") == "confirm" and not d.get("noUI")]
    assert confirms, (
        f"no confirmation dialog was shown; dialogs: {[d.get('title') for d in new_dialogs(world)]}"
    )


@then(parsers.re(r'the extension config file holds "(?P<key>\w+)" = (?P<value>.+)'))
def _config_holds(world: World, key: str, value: str) -> None:
    path = world.observe().project_dir / CONFIG_DIR_NAME / "session-continuity.json"
    assert path.is_file(), f"{path} was not written"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data.get(key) == json.loads(value), f"{path} holds {data!r}"


@then("the dialogs warned that inherit can spend context or output budget near the threshold")
def _inherit_warning(world: World) -> None:
    texts = [_dialog_text(d) for d in new_dialogs(world)]
    warned = [t for t in texts if re.search(r"\binherit", t, re.I) and re.search(r"\bbudget\b", t, re.I)]
    assert warned and any(re.search(r"threshold", t, re.I) for t in warned), (
        f"no dialog warned that inherit can spend budget near the threshold:\n{texts}"
    )


@then("a notification refused the percentages")
def _percent_refused(world: World) -> None:
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)} (refused|failed)\b")


@then("the project settings file was replaced by a rename, never written in place")
def _settings_atomic(world: World) -> None:
    path = _settings_path(world)
    events = [e for e in world.observe().fs_events if str(e.get("path")) == path]
    in_place = [e for e in events if e.get("op") == "write"]
    assert not in_place, f"the project settings file was opened for writing in place: {in_place}"
    assert any(e.get("op") == "replace" for e in events), (
        f"the project settings file was not replaced: {events}"
    )


@then("a notification says the settings were not written")
def _settings_not_written(world: World) -> None:
    _find_notification(
        world,
        rf"^{re.escape(MESSAGE_PREFIX)}.*(nothing was (written|changed|saved)|not (been )?(written|saved|changed))",
    )


@given(
    parsers.re(
        r"the global settings hold compaction reserveTokens (?P<r>\d[\d,]*) and keepRecentTokens (?P<k>\d[\d,]*)"
    )
)
def _global_settings(world: World, r: str, k: str) -> None:
    draft = world.require_setup("global settings")
    draft.data["settings"]["global"]["compaction"] = {
        "enabled": True,
        "reserveTokens": number(r),
        "keepRecentTokens": number(k),
    }


@when(parsers.re(r"the project settings file is edited outside Pi to reserveTokens (?P<n>\d[\d,]*)"))
def _edit_settings(world: World, n: str) -> None:
    world.start()
    begin(world)
    native = {**world.draft.native(), "reserveTokens": number(n)}
    text = json.dumps({"compaction": native}) + "\n"
    outcome = world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"{CONFIG_DIR_NAME}/settings.json", "text": text}})
    )
    assert outcome.ok, f"editing the project settings failed: {outcome.error}"


@then(parsers.re(r"the Brief's frontmatter records reserveTokens (?P<n>\d+)"))
def _frontmatter_reserve(world: World, n: str) -> None:
    recorded = _summary_frontmatter(world).get("reserveTokens")
    assert recorded == int(n), f"reserveTokens is {recorded!r}, expected {n}"


@then(
    parsers.re(
        r"the checkpoint Brief's frontmatter records reserveTokens (?P<r>\d[\d,]*) "
        r"and keepRecentTokens (?P<k>\d[\d,]*)"
    )
)
def _checkpoint_tokens(world: World, r: str, k: str) -> None:
    """Rule P48 (spec §6, §12 "It records the current effective native token policy"): the one
    pending Brief a checkpoint wrote records the values Pi uses for the active model, a
    ``compaction.modelOverrides`` entry included. Found by the fourth independent mutant round
    (``checkpoint_ignores_model_override``: the status read the override, the checkpoint did not)."""
    pending = _files_of(world, "pending")
    assert len(pending) == 1, f"expected one pending Brief, found {pending}"
    brief = parse_brief(world.observe().on_disk(pending[0]).read_text(encoding="utf-8"))
    assert brief is not None, f"{pending[0]} is not a Continuity Brief"
    recorded = (brief.frontmatter.get("reserveTokens"), brief.frontmatter.get("keepRecentTokens"))
    assert recorded == (number(r), number(k)), (
        f"the checkpoint records {recorded}, expected {(number(r), number(k))}"
    )


# --------------------------------------------------------------------- what the synthesis model writes
@given(parsers.re(r'the synthesis model writes the section "(?P<heading>[^"]+)" before all the others'))
def _out_of_order(world: World, heading: str) -> None:
    world.script("extension", SynthesisReply(kind="out_of_order", heading=heading))


@given(
    parsers.re(
        r'the synthesis model writes "(?P<heading>[^"]+)" only inside a (?P<where>code fence|sentence)'
    )
)
def _heading_not_a_line(world: World, heading: str, where: str) -> None:
    if where == "code fence":
        world.script("extension", SynthesisReply(kind="fenced_heading", heading=heading))
    else:
        world.script("extension", SynthesisReply(kind="inline_heading", heading=heading))


@given(parsers.re(r'the synthesis model\'s Next Actions say "(?P<text>(?:[^"\\]|\\.)*)"'))
def _next_actions(world: World, text: str) -> None:
    world.script("extension", SynthesisReply(sections={"## Next Actions": text.replace('\\"', '"')}))


@given(parsers.re(r'the synthesis model reasons "(?P<text>[^"]+)" before it writes the Brief'))
def _reasons_first(world: World, text: str) -> None:
    """A valid reply whose thinking block (the model's reasoning, which pi-ai keeps apart from
    the text) carries ``text``: the Brief is the reply's Markdown body, never its reasoning
    (rule P2). Added by the third independent mutant round (``thinking_in_brief``)."""
    world.script("extension", SynthesisReply(thinking=text))


@given("the synthesis model asks for a tool call after writing the Brief")
def _tool_use(world: World) -> None:
    world.script("extension", SynthesisReply(kind="tool_use"))


@when("the synthesis model copies the Recovery Instructions of the last Brief")
def _copies_recovery(world: World) -> None:
    recovery = section(world.latest_summary_brief().body, "## Recovery Instructions").strip()
    assert recovery, "the last Brief has no Recovery Instructions to copy"
    world.script("extension", SynthesisReply(sections={"## Recovery Instructions": recovery}))


@when("the synthesis model copies the freshness rule of the last Brief into its Key Decisions")
def _copies_rule_elsewhere(world: World) -> None:
    """P78: the rule's text in the body, but not under Recovery Instructions (whose text the
    model writes itself): the extension still inserts it there."""
    paragraphs = freshness_rule_paragraphs(world.latest_summary_brief().body)
    assert paragraphs, "the last Brief states no freshness rule to copy"
    world.script("extension", SynthesisReply(sections={"## Key Decisions": paragraphs[0].strip()}))


def _recovery(world: World) -> str:
    return section(world.latest_summary_brief().body, "## Recovery Instructions")


for _what, _phrase in (
    ("records one specific handoff", "that it records one specific handoff"),
    (
        "is historical evidence, not proof of a new current-turn compaction",
        "that it is historical evidence, not proof of a new current-turn compaction",
    ),
    (
        "permits a new compaction only on a new current-turn event or a newer eventId/artifact",
        "that only a new current-turn event or a newer eventId permits a new compaction",
    ),
):

    def _states(world: World, what: str = _what) -> None:
        text = _recovery(world)
        assert what not in freshness_statements_missing(text), (
            f"the Recovery Instructions do not state that the Brief {what}:\n{text}"
        )

    then(f"the Brief's Recovery Instructions state {_phrase}")(_states)


# --------------------------------------------------------------------- artifacts and frontmatter
def _pending_briefs_under(world: World, root: Path) -> list[Path]:
    sid = world.observe().session_id or ""
    directory = root / sid / "pending"
    files = sorted(p for p in directory.iterdir() if p.is_file()) if directory.is_dir() else []
    return [p for p in files if briefs_in({p.name: p.read_bytes()})]


@then(parsers.re(r'a pending Brief of this session lies under "\$CONFIG/(?P<relative>[^"]+)"'))
def _brief_under_config(world: World, relative: str) -> None:
    root = world.observe().project_dir / CONFIG_DIR_NAME / relative
    found = _pending_briefs_under(world, root)
    assert found, (
        f"no pending Brief of this session under {root}; artifact files: {sorted(world.all_project_files())}"
    )


@when(
    parsers.re(
        r'the extension config names the absolute artifact directory "(?P<name>[^"/]+)" beside the project'
    )
)
def _absolute_artifact_dir(world: World, name: str) -> None:
    world.start()
    begin(world)
    absolute = str(world.observe().project_dir.parent / name)
    world.remembered["absolute_artifact_dir"] = absolute
    text = json.dumps({"artifactDirectory": absolute}) + "\n"
    op = EditFileOp.model_validate(
        {"edit_file": {"path": f"{CONFIG_DIR_NAME}/session-continuity.json", "text": text}}
    )
    outcome = world.perform(op)
    assert outcome.ok, f"writing the extension config failed: {outcome.error}"


@then(
    parsers.re(
        r'a pending Brief of this session lies under the absolute artifact directory "(?P<name>[^"/]+)"'
    )
)
def _brief_under_absolute(world: World, name: str) -> None:
    root = Path(str(world.remembered["absolute_artifact_dir"]))
    found = _pending_briefs_under(world, root)
    assert found, (
        f"no pending Brief of this session under {root}; project files: {sorted(world.all_project_files())}"
    )


@then("a notification said the Brief was saved to the artifactPath of the compaction details")
def _saved_to_artifact_path(world: World) -> None:
    path = str((world.latest_compaction().get("details") or {}).get("artifactPath", ""))
    assert path.endswith(".md"), f"the compaction details carry no artifact file path: {path!r}"
    _find_notification(world, rf"^{re.escape(MESSAGE_PREFIX)}: .*saved to {re.escape(path)}\.?$", paths=True)


@then("the Brief's frontmatter fields follow the schema order")
def _frontmatter_order(world: World) -> None:
    """P61b: every field of the frontmatter block in the schema's order (oracle.frontmatter_order_problem)."""
    problem = frontmatter_order_problem(str(world.latest_compaction().get("summary", "")))
    assert problem is None, problem


@then(
    "the Brief's frontmatter records Pi's tokensBefore, the effective percentages of its tokens "
    "and the leaf before the handoff"
)
def _frontmatter_event(world: World) -> None:
    entry = world.latest_compaction()
    front = _summary_frontmatter(world)
    assert front.get("tokenCountAtTrigger") == entry.get("tokensBefore"), (
        f"tokenCountAtTrigger {front.get('tokenCountAtTrigger')!r}, Pi's tokensBefore {entry.get('tokensBefore')!r}"
    )
    window, reserve, keep = (int(front[k]) for k in ("contextWindow", "reserveTokens", "keepRecentTokens"))
    for key, value in (
        ("effectiveTriggerPercent", (window - reserve) * 100 / window),
        ("effectiveKeepRecentPercent", keep * 100 / window),
    ):
        recorded = float(front.get(key))  # type: ignore[arg-type]
        assert abs(recorded - value) <= 0.05, f"{key} is {recorded}, the tokens give {value:.2f}"
    # Spec §8: recorded "when available", and Pi had a leaf whenever the compaction entry has a
    # parent (an outside mutant that wrote null although it had one passed a check of a
    # recorded leaf only).
    leaf = front.get("branchLeafBefore")
    if leaf is not None or entry.get("parentId") is not None:
        assert leaf == entry.get("parentId"), (
            f"branchLeafBefore {leaf!r} is not the leaf before the handoff {entry.get('parentId')!r}"
        )


#: Session entries whose messages Pi's context holds (``buildContextEntries``, SM:166-290): one
#: of them after the last reply with usage would add chars/4 of its own to the usage.
_CONTEXT_ENTRY_TYPES = frozenset(
    {"message", "custom_message", "branch_summary", "compaction", "context_edit"}
)


def _context_tokens(usage: Any) -> int:
    """``calculateContextTokens``: ``totalTokens``, else the sum of the parts (C:65-67)."""
    if not isinstance(usage, dict):
        return 0
    total = usage.get("totalTokens") or 0
    if total:
        return int(total)
    return sum(int(usage.get(part) or 0) for part in ("input", "output", "cacheRead", "cacheWrite"))


def _branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session entries from the root to the leaf (the last entry appended), by ``parentId``."""
    by_id = {str(e["id"]): e for e in entries if e.get("id")}
    path: list[dict[str, Any]] = []
    entry = next((e for e in reversed(entries) if e.get("id")), None)
    while entry is not None:
        path.append(entry)
        parent = entry.get("parentId")
        entry = by_id.get(str(parent)) if parent else None
    return path[::-1]


@then("the checkpoint Brief records Pi's context usage as its tokenCountAtTrigger")
def _checkpoint_token_count(world: World) -> None:
    """P64d: a checkpoint has no ``tokensBefore``; its tokenCountAtTrigger is Pi's context usage
    (``ctx.getContextUsage().tokens``). Pi derives it (AS:3614-3650, ``estimateProjectedContextTokens``
    C:137-169) from the last assistant reply on the branch that reported usage (not aborted, not an
    error, ``calculateContextTokens`` above 0), plus chars/4 of every message after it; usage older
    than the latest compaction or context edit is not trusted. The step derives the same value from
    the session file, so it holds on real Pi: it asks that the branch end on that reply (nothing
    trailing, no compaction after it), where the usage is exactly the reply's reported tokens, and
    an estimate of the implementation's own (chars/4 of its context) cannot pass for it."""
    checkpoint = world.remembered.get("checkpoint") or {}
    briefs = briefs_in(checkpoint)
    assert len(briefs) == 1, f"expected the checkpoint's one Brief, found {[name for name, _ in briefs]}"
    name, brief = briefs[0]
    branch = _branch(world.observe().entries)
    last = max(
        (
            n
            for n, e in enumerate(branch)
            if e.get("type") == "message"
            and (e.get("message") or {}).get("role") == "assistant"
            and (e.get("message") or {}).get("stopReason") not in ("aborted", "error")
            and _context_tokens((e.get("message") or {}).get("usage")) > 0
        ),
        default=None,
    )
    assert last is not None, (
        "no assistant reply on the branch reported usage: Pi's context usage is an estimate"
    )
    trailing = [e.get("type") for e in branch[last + 1 :] if e.get("type") in _CONTEXT_ENTRY_TYPES]
    assert not trailing, (
        f"entries {trailing} follow the last reply with usage: this step pins the value only when the "
        "branch ends on that reply"
    )
    expected = _context_tokens(branch[last]["message"].get("usage"))
    recorded = brief.frontmatter.get("tokenCountAtTrigger")
    assert recorded == expected, (
        f"{name}: tokenCountAtTrigger {recorded!r}; Pi's context usage at the checkpoint is {expected} "
        "(the last reply's reported tokens)"
    )


_TIMESTAMPED = r"(?=(?:[^\d]*\d){8})[0-9TZ:._-]+"


@then("the archived Brief's file name is <timestamp>-<eventId>.md")
def _archive_name(world: World) -> None:
    event = world.latest_summary_brief().event_id or ""
    names = [Path(p).name for p in _files_of(world, "archive")]
    assert any(re.fullmatch(rf"{_TIMESTAMPED}-{re.escape(event)}\.md", n) for n in names), (
        f"no archived file named <timestamp>-{event}.md: {names}"
    )


@then("the failed postmortem lies in this session's failed directory named <timestamp>-<eventId>.md")
def _failed_name(world: World) -> None:
    names = [Path(p).name for p in _files_of(world, "failed")]
    assert names, "no failed postmortem was written"
    pattern = rf"{_TIMESTAMPED}-[0-9a-fA-F]{{8}}-[0-9a-fA-F-]{{27}}\.md"
    assert all(re.fullmatch(pattern, n) for n in names), (
        f"failed artifacts not named <timestamp>-<eventId>.md: {names}"
    )


# --------------------------------------------------------------------- failed postmortems
def _postmortem(world: World) -> tuple[str, str]:
    failed = _files_of(world, "failed")
    assert failed, "no failed postmortem was written"
    return failed[-1], Path(failed[-1]).read_text(encoding="utf-8")


@then(parsers.re(r'the failed postmortem\'s body starts with "(?P<title>[^"]+)"'))
def _postmortem_title(world: World, title: str) -> None:
    _path, text = _postmortem(world)
    brief = parse_brief(text)
    body = brief.body if brief is not None else text
    assert body.lstrip().startswith(title), (
        f"the failed postmortem does not start with {title!r}:\n{body[:300]}"
    )


@then(
    parsers.re(
        r'the failed postmortem records the phase "(?P<phase>[^"]+)", the error "(?P<error>[^"]+)", '
        r"this session's id and its eventId"
    )
)
def _postmortem_record(world: World, phase: str, error: str) -> None:
    path, text = _postmortem(world)
    assert records_phase(text, phase), f"no phase {phase!r}:\n{text[:600]}"
    assert error in text, f"the error {error!r} is not recorded:\n{text[:600]}"
    session = world.observe().session_id or ""
    assert session, "this session has no id"
    event = ARTIFACT_EVENT_NAME.search(path)
    assert event, f"{Path(path).name} is not named for an eventId"
    # The ids must also stand by the right names: a record whose "Event:" line gives the session
    # id (and "Session:" the eventId) has both ids in it, and names neither correctly.
    identity = [
        p
        for p in failure_record_problems(text, event_id=event.group(1), session_id=session)
        if "recorded" in p or "wrong id" in p
    ]
    assert not identity, f"{'; '.join(identity)}:\n{text[:600]}"


@then("the failed postmortem says native compaction was cancelled and no continuation prompt was submitted")
def _postmortem_outcome(world: World) -> None:
    _path, text = _postmortem(world)
    outcome = [p for p in failure_record_problems(text, event_id="", session_id="") if "does not say" in p]
    assert not outcome, f"{'; '.join(outcome)}:\n{text[:600]}"


@then(parsers.re(r'the failed postmortem is a schema-v2 Brief with status "(?P<status>\w+)"'))
def _postmortem_v2(world: World, status: str) -> None:
    _path, text = _postmortem(world)
    problems = [p for p in brief_problems(text, status=status) if "heading" not in p]
    assert not problems, "the failed postmortem is not a schema-v2 Brief:\n" + "\n".join(problems)


@then(parsers.re(r'the failed postmortem keeps the headings "(?P<a>[^"]+)" and "(?P<b>[^"]+)"'))
def _postmortem_headings(world: World, a: str, b: str) -> None:
    _path, text = _postmortem(world)
    lines = {line.rstrip() for line in text.splitlines()}
    missing = [h for h in (a, b) if h not in lines]
    assert not missing, f"the failed postmortem lost the headings {missing}"


# --------------------------------------------------------------------- the synthesis prompt
@given(parsers.re(r'the user has sent "(?P<text>[^"]+)"'))
@when(parsers.re(r'the user writes "(?P<text>[^"]+)"'))
def _user_sent(world: World, text: str) -> None:
    world.script("agent", Reply(text="noted", context_tokens=5_000 * (world.turns + 1)))
    world.turns += 1
    outcome = world.prompt(text)
    assert outcome.ok, f"the prompt failed: {outcome.error}"
    world.remembered.setdefault("user_sent", []).append(text)


def _last_synthesis(world: World) -> ObservedRequest:
    return _synthesis_requests(world)[-1]


@then("the synthesis request listed the mandatory headings in order")
def _prompt_headings(world: World) -> None:
    problem = headings_listed_problem(_last_synthesis(world).text)
    assert problem is None, problem


@then("the synthesis request described Current State as a snapshot of the present work")
def _prompt_current_state(world: World) -> None:
    problem = current_state_snapshot_problem(_last_synthesis(world).text)
    assert problem is None, problem


@then(parsers.re(r'the synthesis request stated "(?P<sentence>[^"]+)"'))
def _prompt_states(world: World, sentence: str) -> None:
    text = " ".join(_last_synthesis(world).text.split())
    assert sentence in text, f"the synthesis request does not state {sentence!r}"


@then(
    "the synthesis request forbids inferring a current compaction from an older Brief, CompactionEntry, "
    "recovery instruction or notification rule"
)
def _prompt_no_inference(world: World) -> None:
    problem = inference_forbidden_problem(_last_synthesis(world).text)
    assert problem is None, problem


#: A closing tag (``</transcript>``, ``</previous-brief>``...).
_CLOSER = re.compile(r"</[A-Za-z][\w-]*>")


@then("no closing delimiter the user sent appears twice in the synthesis request")
def _prompt_delimiters(world: World) -> None:
    """Each closing tag the user's messages hold (``</transcript>``, ``</previous-brief>``...)
    appears at most once in the last synthesis request: once where the request closes its own
    block of that name, never again where the user's text would close it early (spec §14,
    P118b). The tags are the user's, not a list of the names an implementation might use."""
    closers = sorted({tag for sent in world.remembered.get("user_sent", ()) for tag in _CLOSER.findall(sent)})
    assert closers, "feature error: the user sent no closing delimiter"
    text = _last_synthesis(world).text
    twice = {closer: text.count(closer) for closer in closers if text.count(closer) > 1}
    assert not twice, f"the user's text closed an evidence block early: {twice}"


@then(parsers.re(r"the synthesis request carried at least (?P<n>\d[\d,]*) tokens of transcript"))
def _prompt_floor(world: World, n: str) -> None:
    request = _last_synthesis(world)
    transcript = len(request.text) - len(request.request.system_prompt or "")
    assert transcript / 4 >= number(n), (
        f"the synthesis request carried about {transcript // 4} tokens of transcript"
    )


# --------------------------------------------------------------------- interrupted writes (P136)
@given("Pi crashes between writing the pending Brief's temporary file and renaming it")
def _crash_before_rename(world: World) -> None:
    # Audit hooks run before an operation: the crash comes at the rename onto pending/<id>.md,
    # after the temporary file was written in full (reference/psc/atomic_io.py).
    world.require_setup("a fault").data["faults"]["fs"].append(
        {"op": "replace", "path": "$PROJECT/*/pending/*", "effect": "crash"}
    )


def _session_files(world: World) -> dict[str, Path]:
    sid = world.observe().session_id or ""
    root = world.artifact_dir() / sid
    return (
        {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()} if root.is_dir() else {}
    )


@when("Pi restarts after the crash left a temporary file")
def _restart_with_temp(world: World) -> None:
    """Records the files of this session that are not Briefs (``*.md``): what the interrupted
    write left. An implementation that left none (it wrote nothing, or not through a temporary
    file) fails here: the scenario has nothing to prove."""
    temps = [name for name in _session_files(world) if not name.endswith(".md")]
    assert temps, (
        f"the crash left no temporary file in this session's directory: {sorted(_session_files(world))}"
    )
    world.remembered["leftover_temps"] = temps
    world.start()
    begin(world)
    outcome = world.perform(RestartOp())
    assert outcome.ok, f"restart failed: {outcome.error}"


@then("each temporary file the crash left was removed and named by a notification, or is named by the status")
def _temps_removed_or_reported(world: World) -> None:
    temps: list[str] = world.remembered["leftover_temps"]
    now = _session_files(world)
    notified = "\n".join(message for message, _kind in world.observe().notifications)
    status = status_output(world)
    silent = []
    for name in temps:
        base = Path(name).name
        if name in now:
            if base not in status:
                silent.append(f"{name} is still there and the status does not name it")
        elif base not in notified:
            silent.append(f"{name} was removed without a notification naming it")
    assert not silent, "a temporary file of an interrupted write was left or removed silently:\n" + "\n".join(
        silent
    )


@then("the Brief's frontmatter records this session's id and session file")
def _frontmatter_session(world: World) -> None:
    """sessionId is Pi's id; sessionFile is Pi's session file, compared by its name (the
    extension may see the machine under another root: the simulator's virtual root)."""
    front = _summary_frontmatter(world)
    observation = world.observe()
    assert front.get("sessionId") == observation.session_id, (
        f"sessionId {front.get('sessionId')!r}; Pi's session id is {observation.session_id!r}"
    )
    recorded, actual = front.get("sessionFile"), observation.session_file
    assert actual is not None, "Pi has no session file to compare with"
    assert isinstance(recorded, str) and Path(recorded).name == actual.name, (
        f"sessionFile {recorded!r}; Pi's session file is {actual}"
    )


# --------------------------------------------------------------------- notification levels (§11)
@then(parsers.re(r'the notification saying "(?P<text>[^"]+)" was (?P<level>info|a warning or an error)'))
def _notification_level(world: World, text: str, level: str) -> None:
    found = [(m, k) for m, k in world.observe().notifications if text.lower() in m.lower()]
    assert found, f"no notification says {text!r}; notifications were: {world.observe().notifications}"
    allowed = {"info"} if level == "info" else {"warning", "error"}
    wrong = [(m[:120], k) for m, k in found if k not in allowed]
    assert not wrong, f"notified at the wrong level (expected {level}): {wrong}"


# --------------------------------------------------------------------- product prefix (P87a)
@then("every notification starts with the product name")
def _notifications_prefixed(world: World) -> None:
    """Spec §11: "All user-visible messages should be short, verifiable, and product-prefixed".
    Only the implementation notifies in these scenarios (Pi itself sends no ``notify``), so
    every notification is the implementation's; an implementation that notified nothing has
    shown nothing to judge."""
    notifications = world.observe().notifications
    assert notifications, "the implementation notified nothing: nothing to judge"
    bare = [message[:120] for message, _ in notifications if not message.startswith(MESSAGE_PREFIX)]
    assert not bare, f"notifications not starting with {MESSAGE_PREFIX!r}: {bare}"


# --------------------------------------------------------------------- no cleanup command (P11)
@when(parsers.re(r'the user runs "(?P<a>/[^"]+)" and "(?P<b>/[^"]+)" after it'))
def _two_commands_after(world: World, a: str, b: str) -> None:
    world.remembered["artifacts_before_commands"] = world.all_artifacts()
    begin(world)
    for text in (a, b):
        outcome = world.command(text)
        assert outcome.ok, f"{text} failed: {outcome.error}"


@then("no artifact file changed since the checkpoint")
def _artifacts_unchanged(world: World) -> None:
    before: dict[str, bytes] = world.remembered["artifacts_before_commands"]
    assert before, "the checkpoint left no artifact to protect"
    now = world.all_artifacts()
    changed = sorted({name for name in set(before) | set(now) if before.get(name) != now.get(name)})
    assert not changed, f"artifact files changed, appeared or disappeared: {changed}"


# --------------------------------------------------------------------- no loop vocabulary (P8b)
_LOOP_WORDS = re.compile(r"\b(loop|campaign|episode)s?\b", re.I)


@then("no notification, status, dialog or Brief frontmatter key used the words loop, campaign or episode")
def _no_loop_words(world: World) -> None:
    observation = world.observe()
    brief = world.latest_summary_brief()
    texts = [
        *(m for m, _ in observation.notifications),
        *observation.statuses.values(),
        *(
            f"{d.get('title', '')}\n{d.get('message', '')}\n{d.get('options', '')}"
            for d in observation.dialogs
        ),
        *observation.command_output,
        *(str(key) for key in dict(brief.frontmatter)),
    ]
    assert observation.notifications, "the implementation notified nothing: nothing to judge"
    hits = [text[:160] for text in texts if _LOOP_WORDS.search(text)]
    assert not hits, f"loop/campaign/episode vocabulary in what the user sees: {hits}"


# --------------------------------------------------------------------- project files (P9)
@then("no project file was written but the artifacts, the extension config and the project settings file")
def _only_own_project_files(world: World) -> None:
    """Spec §4 "No AGENTS.md rewriting": every project file that appeared or changed since Pi
    started is under the artifact directory, or is the extension config or the project settings."""
    observation = world.observe()
    project = observation.project_dir
    before: dict[str, bytes] = world.remembered.get("project_at_start") or {}
    now = project_files(project)
    touched = sorted({name for name in set(now) | set(before) if now.get(name) != before.get(name)})
    artifacts = world.artifact_dir()
    allowed = {f"{CONFIG_DIR_NAME}/session-continuity.json", f"{CONFIG_DIR_NAME}/settings.json"}
    foreign = [
        name
        for name in touched
        if name not in allowed and not (project / name).resolve().is_relative_to(artifacts.resolve())
    ]
    assert touched, "the implementation wrote no project file at all (no artifact either)"
    assert not foreign, f"project files written outside the artifacts, config and settings: {foreign}"


# --------------------------------------------------------------------- session_shutdown (P127)
@then("no artifact file changed since the checkpoint was saved")
def _artifacts_unchanged_since_checkpoint(world: World) -> None:
    before: dict[str, bytes] = world.remembered["artifacts_after_checkpoint"]
    assert before, "the checkpoint left no artifact to protect"
    now = world.all_artifacts()
    changed = sorted({name for name in set(before) | set(now) if before.get(name) != now.get(name)})
    assert not changed, f"artifact files changed, appeared or disappeared: {changed}"


# --------------------------------------------------------------------- startup reconciliation (P113a)
@then("the Brief committed before the crash is archived and the status names its archive path")
def _reconciled(world: World) -> None:
    """The compaction entry Pi persisted before the crash carries a Brief; after the restart that
    Brief lies under archive/ with status archived and the same body, no pending copy is left,
    and the status output names the archive file (spec §13 reconciliation)."""
    summary = str(world.latest_compaction()["summary"])
    committed = parse_brief(summary)
    assert committed is not None and committed.event_id, "the committed summary is not a Continuity Brief"
    archived = [
        (name, parse_brief(data.decode("utf-8")))
        for name, data in world.session_artifacts("archive").items()
        if committed.event_id in name
    ]
    assert archived, f"no archived Brief of event {committed.event_id} after the restart"
    name, brief = archived[-1]
    assert brief is not None and brief.status == "archived", f"{name} is not an archived Brief"
    assert brief.body == committed.body, f"{name} does not hold the committed Brief's body"
    pending = [n for n in world.session_artifacts("pending") if committed.event_id in n]
    assert not pending, f"the committed Brief is still pending: {pending}"
    assert Path(name).name in status_output(world), "the status output does not name the archived Brief"


# --------------------------------------------------------------------- the pending file's name (P51a)
@then("its file lies in this session's pending directory named <eventId>.md")
def _pending_name(world: World) -> None:
    """Spec §7: a pending Brief is ``<artifactDirectory>/<sessionId>/pending/<eventId>.md``
    (``session_artifacts("pending")`` lists only this session's ``pending/``). A session id of
    file-name-safe characters is the directory's name as it is: ``session_artifacts`` also takes
    a directory named by a prefix of the id (a hostile id is made safe, spec §7), which let a
    directory named by the id's first eight characters pass (``session_directory_shortened``)."""
    name, brief = world.remembered["it"]
    assert brief.event_id, f"{name} records no eventId"
    assert Path(name).name == f"{brief.event_id}.md", f"the pending Brief is named {Path(name).name}"
    session_id = world.observe().session_id or ""
    if SAFE_PATH_COMPONENT.fullmatch(session_id):
        exact = world.artifact_dir() / session_id / "pending" / f"{brief.event_id}.md"
        assert exact.is_file(), (
            f"the pending Brief is not at <artifactDirectory>/{session_id}/pending/: {name}"
        )


# --------------------------------------------------------------------- a cancelled compaction's Brief (P110b)
@then("that pending Brief never reached the model and never became a summary")
def _cancelled_brief_inert(world: World) -> None:
    """Spec §13: the pending Brief of a cancelled compaction stays inert: no agent request carries
    its eventId, and no compaction entry has it as its summary."""
    name, brief = world.remembered["it"]
    assert brief.event_id, f"{name} records no eventId"
    for request in world.observe().model_requests:
        if request.kind == "agent":
            assert brief.event_id not in request.text, f"agent request #{request.index} carries {name}"
    for entry in world.compactions():
        assert brief.event_id not in str(entry.get("summary", "")), f"a compaction summary carries {name}"


# --------------------------------------------------------------------- a length stop with every section (P120c)
@given("the synthesis model stops at its output limit in the last sentence of the Brief")
def _length_in_last_sentence(world: World) -> None:
    world.script("extension", SynthesisReply(kind="length_whole"))


# --------------------------------------------------------------------- one command (P93a)
@then(parsers.re(r"the implementation registered exactly one command, /(?P<name>[a-z-]+)"))
def _one_command(world: World, name: str) -> None:
    """Spec §12, §18 "Register one command, `continuity`": the commands Pi lists for the
    extensions of the scenario (competitors register none) are exactly that one."""
    commands = world.observe().commands
    registered = [
        c for owner, names in commands.items() if not owner.startswith("competitor:") for c in names
    ]
    assert registered == [name], f"the implementation registered {registered or 'no command'}"


# --------------------------------------------------------------------- a hostile session id (P52)
@when(parsers.re(r'the session file is rewritten outside Pi to name the session "(?P<session_id>[^"]+)"'))
def _hostile_session_id(world: World, session_id: str) -> None:
    """Pi 1.6 validates ``--session-id`` (``session-manager.js:15-19``) but takes a resumed file's
    header id as it is (``session-manager.js:731``): the next start runs under ``session_id``."""
    observation = world.observe()
    file = observation.session_file
    assert file is not None and file.is_file(), "Pi wrote no session file to rewrite"
    lines = jsonl_lines(file.read_text(encoding="utf-8"))
    header = json.loads(lines[0])
    assert header.get("type") == "session", f"the first line of {file.name} is no session header"
    header["id"] = session_id
    text = "\n".join([json.dumps(header, separators=(",", ":")), *lines[1:]]) + "\n"
    begin(world)
    outcome = world.perform(
        EditFileOp.model_validate({"edit_file": {"path": f"$SESSIONS/{file.name}", "text": text}})
    )
    assert outcome.ok, f"rewriting the session file failed: {outcome.error}"


@then("every Brief written since lies in one directory directly under the artifact directory")
def _briefs_in_one_component(world: World) -> None:
    """Spec §7 (seed README): the session id is made filesystem-safe before it becomes a path
    component, so a hostile id cannot lead a Brief out of ``<artifactDirectory>/<one component>/``."""
    project = world.observe().project_dir
    before: dict[str, bytes] = world.remembered.get("project_at_start") or {}
    now = project_files(project)
    written = {name: data for name, data in now.items() if before.get(name) != data}
    briefs = [name for name, _brief in briefs_in(written)]
    assert briefs, f"no Brief was written (new project files: {sorted(written) or 'none'})"
    root = world.artifact_dir().resolve()
    for name in briefs:
        path = (project / name).resolve()
        assert path.is_relative_to(root), f"{name} lies outside the artifact directory {root}"
        parts = path.relative_to(root).parts
        assert len(parts) == 3 and parts[0] not in (".", ".."), (
            f"{name} is not <artifactDirectory>/<one component>/<kind>/<file>"
        )


@then(
    parsers.re(
        r'the Briefs of the sessions "(?P<first>[^"]+)" and "(?P<second>[^"]+)" lie in different '
        r"directories under the artifact directory"
    )
)
def _sessions_apart(world: World, first: str, second: str) -> None:
    """Spec §7 (seed README): two distinct session ids never share a directory, so one session's
    Briefs can never sit among another's (a sanitiser that maps ``a/b`` and ``a_b``, or ``Ab`` and
    ``ab``, to one name breaks that). Each session must have written a Brief (by its frontmatter
    ``sessionId``), and no directory directly under the artifact directory holds Briefs of both."""
    root = world.artifact_dir().resolve()
    project = world.observe().project_dir
    dirs: dict[str, set[str]] = {first: set(), second: set()}
    for name, brief in briefs_in(project_files(project)):
        session = brief.frontmatter.get("sessionId")
        if session not in dirs:
            continue
        path = (project / name).resolve()
        assert path.is_relative_to(root), f"{name} lies outside the artifact directory {root}"
        dirs[str(session)].add(path.relative_to(root).parts[0])
    for session, found in dirs.items():
        assert found, f"no Brief of session {session!r} was written under {root}"
    shared = dirs[first] & dirs[second]
    assert not shared, (
        f"the sessions {first!r} and {second!r} share the directory {sorted(shared)} under {root}"
    )


# --------------------------------------------------------------------- durable Brief first (P1)
@then("when Pi appended each compaction entry a pending Brief of this session already held its summary")
def _pending_brief_before_entry(world: World) -> None:
    """Spec §3 "Durable Continuity Brief first": the ``summaryFiles`` witness of each
    ``session_compact`` that carries an extension's summary (the project's files holding the
    summary's exact bytes, taken when Pi appended the entry, before any handler ran: the
    simulator's host, real Pi's observer loaded first) names a file
    ``<artifactDirectory>/<session>/pending/<name>.md``."""
    observation = world.observe()
    commits = [e for e in observation.events("session_compact") if e.get("fromExtension")]
    assert commits, "no compaction entry came from an extension"
    root = world.artifact_dir().resolve()
    for event in commits:
        entry = event.get("compactionEntry") or {}
        files = event.get("summaryFiles")
        assert isinstance(files, list), (
            f"the target recorded no witness for compaction entry {entry.get('id')}"
        )
        pending = [
            f
            for f in files
            if Path(f).resolve().parent.name == "pending" and Path(f).resolve().parent.parent.parent == root
        ]
        assert pending, (
            f"when Pi appended compaction entry {entry.get('id')}, no pending Brief held its summary "
            f"(files with its exact bytes: {files or 'none'})"
        )
