"""The blitz handoff explorer's invariants, read from what a run leaves behind.

They read the operations (with their dispositions), the session files, the trace and the
managed files, never the reference's code. Those a prefix of the run can break are checked after
every operation on the run so far, so the explorer stops at the operation that broke one; the
others, and the parts that need the run's end, when the run is over (several only hold once the
run is quiet: a prompt captured while a writer works is delivered later): :data:`CHECKED_WHEN`
says which, and why. The first four are the rules the reference document stresses:

``captured_prompts_kept_in_order``
    every prompt the implementation captured (``handled``) is kept, unchanged, in the
    recovery directory or delivered to a model after its capture, and prompts found
    together keep their capture order;
``dossier_kept_until_receiver_turn``
    after a Finish was accepted, the implementation never removes the dossier before the
    receiving session's bootstrap turn has settled;
``one_active_request``
    within one request (until a cancel, a reload or a session switch) every successful
    template response carries the same Finish ID and one Call instruction is sent at most;
``finish_only_with_returned_id``
    an accepted Finish carries exactly the Finish ID of the latest successful template
    response of that session, and no Finish is accepted twice.

The others: ``prompts_captured_when_due``, ``valid_finish_accepted``, ``finish_refused_onto_empty_dossier``,
``dossier_named_after_source_session``,
``receiver_link_follows_chain_limit``, ``one_reminder_per_request``, ``reminder_only_while_request_waits``,
``emergency_once_at_90_percent``, ``automatic_initiation_budget``, ``automatic_request_when_due``,
``settings_file_valid``, ``dossier_retained_when_deletion_off``, ``foreign_files_untouched``,
``project_call_template_used``, ``invalid_config_refuses_starts``,
``in_memory_session_starts_nothing``, ``explicit_start_makes_request``,
``refused_start_said_aloud``, ``dialog_only_for_a_command``, ``switch_only_after_accepted_finish``,
``user_operation_blocked_while_protected``, ``recovery_files_named_as_specified``. Most forbid; six also require what
the reference requires, so doing too little fails too: ``explicit_start_makes_request`` (the
Call of a start nothing may refuse), ``refused_start_said_aloud`` (a notification for a start
that sends none), ``prompts_captured_when_due`` (a prompt due for capture;
``captured_prompts_kept_in_order`` judges the captured ones), ``emergency_once_at_90_percent`` (a
due emergency), ``valid_finish_accepted`` (the forbidding half is
``finish_only_with_returned_id``) and ``automatic_request_when_due`` (the upper bound is
``automatic_initiation_budget``). Each
declares the rules it checks, by their ids in the catalogue
``pi_continuity_harness/rules/blitz.yaml`` (:data:`BLITZ_INVARIANTS`).

They read the run the way the suite's steps do (:mod:`pi_continuity_harness.features.blitz_oracle`):
a Finish ID, a dossier path, the Call instruction, a reminder and the emergency are recognised by
what the reference fixes (names, positions in the transcript), never by the reference
implementation's wording, so any implementation is judged the same way. Before the messages of a
request are told apart, what the extension sent while the user's ``/sh cancel`` or ``/sh recover``
ran is set aside by the operation that produced it (:meth:`_Run.producers`, read from the trace):
prompts handed back at a cancel or a recovery turn are no Call, reminder or emergency; nor is the
receiving session's bootstrap, set aside by its producer (the ``withSession`` context). A user
message is the extension's when its text, as the trace writes it (``$WORK`` paths), is an
``input`` the extension sent.

:class:`BlitzChecker` runs them after every operation and when the run is over (``finish``);
:func:`run_checker` builds
one for any run of the system (the explorer's, or a regression file the suite replays).
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import operator
import os
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pi_continuity_harness.api import CONFIG_DIR_NAME
from pi_continuity_harness.explore.blitz.generate import FINISH, GET, MANAGED, WINDOW
from pi_continuity_harness.explore.plugin import LOAD_FAILURE, WITHIN_BUDGET, InvariantSpec, Violation
from pi_continuity_harness.features import blitz_oracle as oracle
from pi_continuity_harness.scenario.document import Scenario
from pi_continuity_harness.scenario.identity_memo import identity
from pi_continuity_harness.scenario.operations import EditFileOp, Operation
from pi_continuity_harness.scenario.trace import jsonl_lines
from pi_continuity_harness.scenario.transcript import content_text as _text
from pi_continuity_harness.simulator.runner import REPLACED_SESSION
from pi_continuity_harness.simulator.simulation import Simulation

__all__ = [
    "BLITZ_INVARIANTS",
    "CHECKED_WHEN",
    "END",
    "PREFIX",
    "BlitzChecker",
    "invariant_specs",
    "run_checker",
]

#: The tag each entry carries through :func:`_paired_tool_results` (a trace position, or nothing).
T = TypeVar("T")

_DOSSIER_IN_RESULT = re.compile(oracle.DOSSIER_MATCH)


@functools.lru_cache(maxsize=1024)
def _dossier_in(text: str) -> str | None:
    """The dossier path a template response names (:data:`_DOSSIER_IN_RESULT`), if any.
    Remembered by text: the checks after every operation read every template response of the
    run again, and searching each was 1 % of a blitz exploration (issue 16)."""
    found = _DOSSIER_IN_RESULT.search(text)
    return found.group(1) if found else None


#: The ``/sh`` subcommands that end a request or run only without one (reference: Commands,
#: Cancel, Recovery): nothing the extension sends while one runs belongs to a request.
_NO_REQUEST_COMMANDS = ("cancel", "recover")


# ======================================================================== observation
#: A tool call's name, its arguments and its result message (:func:`_tool_exchanges`).
ToolExchange = tuple[str, dict[str, Any], dict[str, Any]]


class RunReading(Protocol):
    """What the invariants that need no trace read of a run: the simulator's (:class:`_Run`), or
    one real Pi lets be observed (``explore --target pi``: :mod:`.observed`'s ``_Observed``, from
    the session files, the live session's entries and the files on disk).

    ``finish_only_with_returned_id``, ``settings_file_valid``,
    ``dossier_retained_when_deletion_off``, ``recovery_files_named_as_specified`` and
    ``dossier_named_after_source_session``, and what they call, read only these, so mypy checks
    that both readings offer them; the parts that need the trace reach it through
    :meth:`trace_reading` (None on an observed run). Before, the observed reading copied a few of
    ``_Run``'s attributes and the helpers tested ``isinstance(run, _Run)``: a helper that used
    another one (``once``) made ``dossier_retained_when_deletion_off`` raise ``AttributeError``
    on every observed run with ``deleteHandoffAfterReading`` false."""

    @property
    def scenario(self) -> Scenario: ...

    @property
    def settings(self) -> dict[str, Any]: ...

    def managed(self, *parts: str) -> Path: ...

    def once(self, name: str, make: Callable[[], T]) -> T:
        """``make()``, made once for this reading of the run (:meth:`_Run.once`)."""
        ...

    def session_exchanges(self) -> list[list[ToolExchange]]:
        """The tool exchanges of each session, in creation order (the live session last)."""
        ...

    def session_entries(self) -> list[list[dict[str, Any]]]:
        """The entries of each session, in the order of :meth:`session_exchanges`."""
        ...

    def session_ids(self) -> list[str | None]:
        """The native id of each session of :meth:`session_entries`, in the same order, as its
        file's header has it (None: no file, an in-memory session)."""
        ...

    def project_dir(self) -> str:
        """The project's directory, Pi's cwd."""
        ...

    def trace_reading(self) -> _Run | None:
        """The reading of the simulator's trace (None: the run has no trace, it was observed)."""
        ...


@dataclass
class _Run:
    """What a finished simulation shows, read the same way for any implementation."""

    simulation: Simulation
    settings: dict[str, Any]
    #: Whether the run is over (:meth:`BlitzChecker.finish`); False while :meth:`BlitzChecker.after_operation`
    #: judges the run so far, when the parts of an invariant that need the run's end say nothing.
    over: bool = True
    _records: list[dict[str, Any]] | None = None
    _boundaries: list[int] | None = None
    _transcript: list[tuple[int, oracle.Item]] | None = None
    _files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Shared by the checks of one run (:class:`BlitzChecker`): what is known of the run so far
    #: that a later check reads unchanged (None: nothing shared).
    memo: _Memo | None = None
    #: What one reading of the run made, by name (:meth:`once`).
    _made: dict[str, Any] = field(default_factory=dict)
    _handoff_messages: list[tuple[int, int, oracle.HandoffMessage]] | None = None

    @property
    def host(self) -> Any:
        return self.simulation.host

    @property
    def scenario(self) -> Scenario:
        return self.simulation.result.scenario

    @property
    def has_ui(self) -> bool:
        """Pi's mode has dialogs (``rpc``, ``tui``); in ``print`` and ``json`` they answer nothing."""
        return self.scenario.mode in ("rpc", "tui")

    @property
    def records(self) -> list[dict[str, Any]]:
        """The trace's records as they stand when first read (one copy per check: a ``_Run`` reads
        the run at one moment, and every invariant iterates them, some several times)."""
        if self._records is None:
            self._records = list(self.host.trace.records)
        return self._records

    def selected(self, name: str, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
        """The records ``keep`` keeps, in trace order (``name``: the filter's, for :attr:`memo`)."""
        if self.memo is None:
            return [r for r in self.records if keep(r)]
        return self.memo.selected(name, self.host.trace.records, self.records, keep)

    def fold(self, name: str, make: Callable[[], S], deps: Callable[[int], Hashable] | None = None) -> S:
        """``make()``'s scanner (:class:`_Scanner`) fed every record of the run so far, in order.

        With :attr:`memo`, the scanner of the last check goes on from the record where it
        stopped (issue 16: each check read the run again from its start, so checking after
        operation k cost the whole prefix): a scanner's state after a record depends only on the
        records up to it and on what ``deps(count)`` returns, what else it reads of the first
        ``count`` records (the handoff messages among them, the submitted dossiers). A new one
        is fed from the start when the trace list was replaced or cut, or when ``deps`` of the
        records already read changed (a later reading placed a message among them)."""
        if self.memo is None:
            scanner = make()
            scanner.feed(self, self.records)
            return scanner
        return self.memo.fold(name, self, make, deps)

    def real(self, path: str) -> str:
        return path.replace("$WORK", self.host.paths.workdir)

    def trace_reading(self) -> _Run:
        """This reading: a simulated run has its trace (:class:`RunReading`)."""
        return self

    def session_files(self) -> list[Path]:
        return self.once("session_files", lambda: _listed(_path(self.host.paths.session_dir), "", ".jsonl"))

    def once(self, name: str, make: Callable[[], T]) -> T:
        """``make()``, made once for this reading of the run: the invariants read the same
        derived lists (the session entries, the tool exchanges, the template responses) several
        times in one check, and a check now follows every operation."""
        if name not in self._made:
            self._made[name] = make()
        made: T = self._made[name]
        return made

    def session_entries(self) -> list[list[dict[str, Any]]]:
        """Entries per session, in creation order (files on disk, plus the live session)."""
        return [entries for _key, entries in self.session_sources()]

    def session_sources(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """(session file, its entries) of :meth:`session_entries` (the live session's file name,
        "" for an in-memory one)."""
        return self.once("session_sources", self._session_sources)

    def _session_sources(self) -> list[tuple[str, list[dict[str, Any]]]]:
        out = []
        live = self.host.runtime.session_manager if self.host.runtime is not None else None
        live_file = live.get_session_file() if live is not None else None
        for path in self.session_files():
            if str(path) == live_file:
                continue
            out.append((str(path), self.file_entries(path)))
        if live is not None:
            out.append((str(live_file or ""), self.live_entries()))
        return out

    def file_entries(self, path: Path) -> list[dict[str, Any]]:
        """A session file's entries (its lines after the header), sliced once per check
        (:meth:`session_sources` and :meth:`entries` both read them). No reader changes them."""
        return self.once(f"file_entries {path}", lambda: self.lines(path)[1:])

    def live_entries(self) -> list[dict[str, Any]]:
        """The live session's entries (``SessionManager.get_entries``, a new list), read once per
        check: :meth:`session_sources` and :meth:`entries` both read them, and each call copies
        the list of every entry of the session. No reader changes the list."""
        runtime = self.host.runtime
        if runtime is None:
            return []
        return self.once("live_entries", runtime.session_manager.get_entries)

    def session_exchanges(self) -> list[list[tuple[str, dict[str, Any], dict[str, Any]]]]:
        """:func:`_tool_exchanges` of each of :meth:`session_entries`: with :attr:`memo`, a
        session's exchanges are paired once, only the entries appended since the last check read
        (all again when the session's entries are no longer those read before, by identity: a
        file rewritten rather than appended, the live session become a file)."""
        return self.once("session_exchanges", self._session_exchanges)

    def session_ids(self) -> list[str | None]:
        """The header id of each session of :meth:`session_sources` (None for an in-memory one)."""
        return [
            _header_id(self.lines(_path(key))) if key else None for key, _entries in self.session_sources()
        ]

    def project_dir(self) -> str:
        return str(self.host.paths.project_dir)

    def _session_exchanges(self) -> list[list[tuple[str, dict[str, Any], dict[str, Any]]]]:
        out = []
        for key, entries in self.session_sources():
            if self.memo is None:
                pairing = _Pairing()
                pairing.feed(self, [(None, entry) for entry in entries])
            else:
                pairing = self.memo.extended(f"session {key}", entries, _Pairing)
            out.append(list(pairing.exchanges))
        return out

    def lines(self, path: Path) -> list[dict[str, Any]]:
        """A JSON-lines file's records (``[]`` when unreadable), parsed once per check: the
        checker writes nothing, so every invariant reads what the first read (issue 16: the
        session files were parsed again by each invariant that reads them, a twentieth of an
        explored blitz seed), and with :attr:`memo` only what was appended since the last check
        (:meth:`_Memo.lines`). The records are shared as the live session's entries already are;
        no invariant changes them."""
        key = str(path)
        known = self._files.get(key)
        if known is None:
            known = self._files[key] = _lines(path) if self.memo is None else self.memo.lines(path)
        return known

    def managed(self, *parts: str) -> Path:
        return _path(self.host.paths.agent_dir, "pi-blitz-handoff", *parts)

    def recovery_texts(self) -> list[str]:
        """Each recovery file's text, its line ends as written: ``read_text`` translated CRLF
        to LF, which hid an implementation that rewrites a captured prompt's line ends (H27b)."""
        root = self.managed("recovery")
        if not root.is_dir():
            return []
        return [p.read_bytes().decode("utf-8") for p in sorted(root.rglob("*")) if p.is_file()]

    def boundaries(self) -> list[int]:
        """Trace positions where a request ends for sure: a cancel, a reload, a session switch.

        Each epoch between two of them holds at most one request, which is what
        :func:`~pi_continuity_harness.features.blitz_oracle.classify` reads at a time. The
        reference also ends a request at the menu's Cancel and at a cutover that fails (an
        unreadable chain ancestor, H123); the generator makes neither (its menu picks Start or
        Recovery, and its chains stay readable). Audited for seeds 0-99: no epoch of the
        reference holds a second request (every widget change into Waiting or Writing counted)."""
        return sorted(int(r["seq"]) for r in self.selected("boundaries", _is_boundary))

    def sorted_boundaries(self) -> list[int]:
        """:meth:`boundaries`, found once per check."""
        if self._boundaries is None:
            self._boundaries = self.boundaries()
        return self._boundaries

    def epoch(self, seq: int) -> int:
        """How many boundaries (:meth:`boundaries`, sorted) come before ``seq``."""
        return bisect.bisect_left(self.sorted_boundaries(), seq)

    def transcript(self) -> list[tuple[int, oracle.Item]]:
        """Every entry of every session as the blitz oracle reads it, with its trace position.

        The trace records each appended entry (``entry``, with its id) in order, and which session
        is live (``host``/``runtime``); the entries themselves (full texts) come from the session
        files and the live session. A user message is the extension's when an extension sent its
        text (``input`` with ``source: "extension"``): the entry's text as the trace writes it
        (:meth:`traced`) is one of those inputs. Before, the entry's text was compared as it
        stands, with real paths, with the trace's, whose paths read ``$WORK/...``: a message
        holding a path (the receiver's bootstrap, which names the dossier, Transfer sequence 6)
        was never recognised as the extension's.

        Read on from where the last check stopped (:class:`_TranscriptScan`); from the start when
        :meth:`entries` were read again, or when an input the extension sent since has the text of
        a user message already read as the user's (the extension's texts are a set: a later
        send makes an earlier message with that text the extension's)."""
        if self._transcript is None:
            self._transcript = self._transcript_scan().out
        return self._transcript

    def _transcript_scan(self) -> _TranscriptScan:
        source = self._entry_scan()
        inputs = self.selected("extension_inputs", _is_extension_input)
        known = self.memo.scans.get("transcript") if self.memo is not None else None
        if not (
            isinstance(known, _TranscriptScan)
            and known.source is source
            and known.inputs <= len(inputs)
            and known.users.isdisjoint(str(r.get("text", "")) for r in inputs[known.inputs :])
        ):
            known = _TranscriptScan(source, self.memo.items if self.memo is not None else {})
            if self.memo is not None:
                self.memo.scans["transcript"] = known
        scan: _TranscriptScan = known
        scan.feed(self, inputs, source.out)
        return scan

    def traced(self, text: str) -> str:
        """``text`` as the trace writes it (paths under the work directory as ``$WORK``), so that a
        text from a session file compares with a record's like with like."""
        return str(self.host.trace.normalise(text))

    def entries(self) -> list[tuple[int, str, dict[str, Any]]]:
        """(trace seq, session file, entry) of every entry of every session, in the order the trace
        recorded their appends: the trace says which session is live (``host``/``runtime``) and
        which entry was appended (``entry``, with its id); the entries themselves come from the
        session files and the live session (an in-memory session has no file).

        Read on from where the last check stopped (:class:`_EntryScan`). An entry record whose
        entry is in no session yet (Pi writes a session file from its first assistant message on)
        is kept aside; when one of them is found later, or a session's entries are no longer
        those read before (:meth:`_Memo.index`: a file rewritten or gone, the live session
        become a file), the entries are read again from the start."""
        return self._entry_scan().out

    def _entry_scan(self) -> _EntryScan:
        return self.once("entry_scan", self._scan_entries)

    def _scan_entries(self) -> _EntryScan:
        sources: dict[str, list[dict[str, Any]]] = {}
        for path in self.session_files():
            sources[str(path)] = self.file_entries(path)
        live = self.host.runtime.session_manager if self.host.runtime is not None else None
        if live is not None:
            sources[str(live.get_session_file() or "")] = self.live_entries()
        memo = self.memo
        if memo is None:
            index = {key: {str(e.get("id")): e for e in entries} for key, entries in sources.items()}
            return self.fold("entries", lambda: _EntryScan(index))
        index, generation = memo.index(sources)
        known = memo.folds.get("entries")
        if known is not None and isinstance(known.state, _EntryScan):
            if known.state.resolvable(index):
                del memo.folds["entries"]
            else:
                known.state.index = index
        return self.fold("entries", lambda: _EntryScan(index), lambda _count: generation)

    def producers(self) -> dict[int, dict[str, Any] | None]:
        """Trace seq of the entry of each message the extension sent → the operation (its trace
        record) that was running when the extension sent it, None outside every operation.

        Read from the host's records, not from the message's wording: the extension's send is a
        ``call`` record (``send_user_message``, ``send_message``) inside the span of an ``op``
        record (up to its ``phase: end`` record). A user message's send is paired with the
        ``input`` event (``source: "extension"``) it caused, the first unpaired send whose
        recorded text (an excerpt) the input's text starts with, and that input with the first
        later entry holding its text; a custom message's send with the first later
        ``custom_message`` entry of its ``customType``. Both are first in, first out, as Pi
        delivers them; a reload or a session switch drops what was not delivered
        (:class:`_ProducerScan`, read on from where the last check stopped, from the start when
        :meth:`entries` were read again)."""
        return self._producer_scan().out

    def _producer_scan(self) -> _ProducerScan:
        source = self._entry_scan()
        return self.fold("producers", lambda: _ProducerScan(source), lambda _count: source)

    def sent_by_replaced_session(self, seq: int) -> bool:
        """Whether the message of the entry at ``seq`` went out through the context
        ``ctx.newSession``'s ``withSession`` callback receives (its ``call`` record's ``ext``, read
        by :meth:`producers`): the receiving session's first prompt (the bootstrap), sent before
        that session has a request of its own."""
        return seq in self._producer_scan().replaced_session_sends

    def sent_by_command(self, seq: int, subcommands: tuple[str, ...]) -> bool:
        """Whether the extension sent the message of the entry at ``seq`` while the user's
        ``/sh <subcommand>`` (one of ``subcommands``) ran (:meth:`producers`)."""
        op = self.producers().get(seq)
        if op is None or op.get("name") != "command":
            return False
        words = str(op.get("text", "")).split()
        return len(words) > 1 and words[0] == f"/{oracle.COMMAND}" and words[1] in subcommands

    def handoff_messages(self) -> list[tuple[int, int, oracle.HandoffMessage]]:
        """(trace seq, request epoch, message) of every message the extension sent a source model,
        classified per request (:func:`~pi_continuity_harness.features.blitz_oracle.classify`).

        What the extension sends while the user's ``/sh cancel`` or ``/sh recover`` runs is set
        aside first (:data:`_NO_REQUEST_COMMANDS`): it is that command's own doing, a recovery
        turn or prompts handed back at a cancel, never a Call, reminder or emergency, whatever it
        says. Before, such a message was the first extension message after the cancel, so it
        counted as a reminder and the next request's Call as a second one.

        The receiving session's bootstrap is set aside too (:meth:`sent_by_replaced_session`): the
        "short first prompt: absolute path, startup/cleanup" of the replacement session (reference:
        Transfer sequence 6), sent before that session has a request, never a Call, reminder or
        emergency. It was left out before only because its text, which names the dossier, was
        never recognised as the extension's (:meth:`transcript`).

        Classified once per check (the five invariants that read it only iterate): each
        classified them again, 3 % of a blitz exploration (issue 16). With :attr:`memo`, the
        transcript's items are put in their epochs only once (:class:`_EpochScan`), and an epoch
        is classified again only when it gained items or the Call templates changed: classify
        reads an epoch's items in order, and the transcript only grows."""
        if self._handoff_messages is not None:
            return self._handoff_messages
        transcript = self._transcript_scan()
        producers = self._producer_scan()
        if self.memo is None:
            epochs = _EpochScan(transcript, producers)
        else:
            known = self.memo.scans.get("epochs")
            fresh = (
                isinstance(known, _EpochScan)
                and known.transcript is transcript
                and known.producers is producers
                and known.count <= len(transcript.out)
            )
            epochs = known if fresh and isinstance(known, _EpochScan) else _EpochScan(transcript, producers)
            self.memo.scans["epochs"] = epochs
        epochs.feed(self, transcript.out)
        templates = tuple(self.call_templates())
        out = []
        for epoch, items in sorted(epochs.by_epoch.items()):
            known_kinds = epochs.classified.get(epoch)
            if known_kinds is None or known_kinds[0] != (len(items), templates):
                known_kinds = epochs.classified[epoch] = (
                    (len(items), templates),
                    _classified(items, templates),
                )
            out += [(seq, epoch, message) for seq, message in known_kinds[1]]
        self._handoff_messages = sorted(out, key=lambda x: x[0])
        return self._handoff_messages

    def call_templates(self) -> list[str]:
        """The texts of the run's Call templates (``templates/call_*.cmpl``, the files the run
        shows, not the reference's wording): a message carrying one is a Call instruction, the
        selected Call template's text with the protocol appended (H18a), whenever it comes."""
        return self.once("call_templates", self._call_templates)

    def _call_templates(self) -> list[str]:
        root = self.managed("templates")
        if not root.is_dir():
            return []
        listed = _listed(root, "call_", ".cmpl", ordered=False)
        texts = (self._template_text(p) for p in listed)
        return [t for t in texts if t]

    def _template_text(self, path: Path) -> str:
        """A template file's text, stripped; with :attr:`memo`, read again only when its size or
        modification time changed (as :meth:`_Memo.lines` reads a session file): the templates
        were read after every operation."""
        if self.memo is None:
            return path.read_text(encoding="utf-8", errors="replace").strip()
        stat = path.stat()
        stamp = (stat.st_size, stat.st_mtime_ns)
        known = self.memo.templates.get(str(path))
        if known is None or known[0] != stamp:
            known = self.memo.templates[str(path)] = (
                stamp,
                path.read_text(encoding="utf-8", errors="replace").strip(),
            )
        return known[1]


def _header_id(lines: list[dict[str, Any]]) -> str | None:
    """The ``id`` of a session file's header (its first line), if it has one."""
    found = lines[0].get("id") if lines else None
    return found if isinstance(found, str) else None


@functools.lru_cache(maxsize=4096)
def _path(*parts: str) -> Path:
    """``Path(*parts)``, made once for the same parts: the checks after every operation name the
    same session files and managed files again each time, and making their ``Path`` objects
    (parsing the parts) was 2 % of a blitz exploration (issue 16). A ``Path`` never changes."""
    return Path(*parts)


def _listed(root: Path, prefix: str, suffix: str, *, ordered: bool = True) -> list[Path]:
    """``root.glob(f"{prefix}*{suffix}")`` (sorted when ``ordered``, else in the directory's
    order, as ``glob`` gives them): the same names (``fnmatch``'s ``*`` matches any characters,
    a leading dot too; ``prefix`` and ``suffix`` cannot overlap here, the suffix begins with a
    dot the prefix lacks), without ``pathlib``'s pattern selectors, which cost a check after
    every operation more than reading the names (issue 16)."""
    try:
        names = os.listdir(root)
    except OSError:
        return []
    folder = str(root)
    paths = [_path(folder, name) for name in names if name.startswith(prefix) and name.endswith(suffix)]
    return sorted(paths) if ordered else paths


class _Scanner:
    """A reading of the run's records that goes on where it stopped (:meth:`_Run.fold`)."""

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        raise NotImplementedError


S = TypeVar("S", bound=_Scanner)


class _Pairing:
    """:func:`_paired_tool_results` one batch of entries at a time: the calls seen so far, and
    every (tag, tool name, call arguments, result message) paired so far."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self.paired: list[tuple[Any, str, dict[str, Any], dict[str, Any]]] = []
        #: :attr:`paired` without the tags (:data:`ToolExchange`), kept as they are paired: a
        #: check after every operation took every session's exchanges out of it again.
        self.exchanges: list[ToolExchange] = []

    def feed(self, run: _Run | None, entries: Iterable[tuple[Any, dict[str, Any]]]) -> None:
        calls, paired, exchanges = self.calls, self.paired, self.exchanges
        for tag, entry in entries:
            message = entry.get("message") or {}
            if entry.get("type") != "message":
                continue
            if message.get("role") == "assistant":
                for block in message.get("content") or []:
                    if isinstance(block, dict) and block.get("type") == "toolCall":
                        calls[str(block.get("id"))] = (
                            str(block.get("name")),
                            dict(block.get("arguments") or {}),
                        )
            elif message.get("role") == "toolResult":
                name, arguments = calls.get(
                    str(message.get("toolCallId")), (str(message.get("toolName")), {})
                )
                paired.append((tag, name, arguments, message))
                exchanges.append((name, arguments, message))


class _EntryScan(_Scanner):
    """:meth:`_Run.entries` read record by record: the session live at the last ``runtime``
    record, the entries found, and the entry records whose entry no session holds yet."""

    def __init__(self, index: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.index = index
        self.current = ""
        self.out: list[tuple[int, str, dict[str, Any]]] = []
        self.by_seq: dict[int, dict[str, Any]] = {}
        self.unresolved: list[tuple[str, str]] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        index, current = self.index, self.current
        for record in records:
            if record["kind"] == "host" and record["name"] == "runtime":
                current = run.real(str(record.get("sessionFile") or ""))
            elif record["kind"] == "entry":
                entry = index.get(current, {}).get(str(record.get("id")))
                if entry is not None:
                    seq = int(record["seq"])
                    self.out.append((seq, current, entry))
                    self.by_seq[seq] = entry
                else:
                    self.unresolved.append((current, str(record.get("id"))))
        self.current = current

    def resolvable(self, index: dict[str, dict[str, dict[str, Any]]]) -> bool:
        """Whether a session now holds an entry that no session held when its record was read."""
        return any(entry_id in index.get(session, {}) for session, entry_id in self.unresolved)


class _TranscriptScan:
    """:meth:`_Run.transcript` read entry by entry (of :class:`_EntryScan` ``source``): the
    texts the extension sent (the first ``inputs`` of the ``extension_inputs`` records), and the
    traced texts of the user messages read as the user's (``users``)."""

    def __init__(self, source: _EntryScan, items: dict[tuple[int, bool], oracle.Item]) -> None:
        self.source = source
        self.items = items
        self.sent: set[str] = set()
        self.inputs = 0
        self.users: set[str] = set()
        self.count = 0
        self.out: list[tuple[int, oracle.Item]] = []

    def feed(
        self, run: _Run, inputs: list[dict[str, Any]], entries: list[tuple[int, str, dict[str, Any]]]
    ) -> None:
        self.sent.update(str(r.get("text", "")) for r in inputs[self.inputs :])
        self.inputs = len(inputs)
        sent, items = self.sent, self.items
        for seq, _session, entry in entries[self.count :]:
            text = _user_text(entry)
            traced = run.traced(text) if text is not None else None
            mine = traced is not None and traced in sent
            if traced is not None and not mine:
                self.users.add(traced)
            item = items.get((seq, mine))
            if item is None:
                ours = {text} if text is not None and mine else set()
                item = items[(seq, mine)] = oracle.items_from_entries([entry], ours)[0]
            self.out.append((seq, item))
        self.count = len(entries)


#: The record kinds :class:`_ProducerScan` never reads (half the records of a blitz run).
_NOT_PRODUCING = frozenset({"session", "model", "fs", "ui", "fault"})


class _ProducerScan(_Scanner):
    """:meth:`_Run.producers` read record by record (the entries of :class:`_EntryScan`
    ``source``): the operation running, the sends and inputs not paired yet."""

    def __init__(self, source: _EntryScan) -> None:
        self.source = source
        self.op: dict[str, Any] | None = None
        # (text, op, the send's ``call`` record): the record says which context sent it.
        self.user_sends: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = []
        self.custom_sends: list[tuple[Any, dict[str, Any] | None]] = []
        self.inputs: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = []
        self.out: dict[int, dict[str, Any] | None] = {}
        #: Trace seqs of the entries of the user messages sent through ``with_session``'s context.
        self.replaced_session_sends: set[int] = set()

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        by_seq, out = self.source.by_seq, self.out
        op, user_sends, custom_sends, inputs = self.op, self.user_sends, self.custom_sends, self.inputs
        for record in records:
            kind, name = record["kind"], record["name"]
            if kind in _NOT_PRODUCING:
                continue
            if kind == "op":
                op = None if record.get("phase") == "end" else record
            elif kind == "host" and name in ("runtime", "reload"):
                # A new runtime: what the old one had not delivered yet never will be.
                user_sends, custom_sends, inputs = [], [], []
            elif kind == "call" and name == "send_user_message":
                user_sends.append((str(record.get("text", "")).removesuffix("\u2026"), op, record))
            elif kind == "call" and name == "send_message":
                custom_sends.append((record.get("customType"), op))
            elif kind == "event" and name == "input" and record.get("source") == "extension":
                text = str(record.get("text", ""))
                at = next(
                    (i for i, (sent, _op, _call) in enumerate(user_sends) if text.startswith(sent)), None
                )
                _sent, sender_op, call = user_sends.pop(at) if at is not None else ("", None, None)
                inputs.append((text, sender_op, call))
            elif kind == "entry" and int(record["seq"]) in by_seq:
                seq = int(record["seq"])
                entry = by_seq[seq]
                if entry.get("type") == "custom_message":
                    ctype = entry.get("customType")
                    at = next((i for i, (sent, _op) in enumerate(custom_sends) if sent == ctype), None)
                    if at is not None:
                        out[seq] = custom_sends.pop(at)[1]
                elif (said := _user_text(entry)) is not None:
                    traced = run.traced(said)
                    at = next((i for i, (sent, _op, _call) in enumerate(inputs) if sent == traced), None)
                    if at is not None:
                        _text_sent, out[seq], call = inputs.pop(at)
                        if call is not None and call.get("ext") == REPLACED_SESSION:
                            self.replaced_session_sends.add(seq)
        self.op, self.user_sends, self.custom_sends, self.inputs = op, user_sends, custom_sends, inputs


class _EpochScan:
    """The transcript's items (of :class:`_TranscriptScan` ``transcript``) that can be handoff
    messages, by request epoch (:meth:`_Run.handoff_messages`), and each epoch's classification
    with the (item count, Call templates) it was made for."""

    def __init__(self, transcript: _TranscriptScan, producers: _ProducerScan) -> None:
        self.transcript = transcript
        self.producers = producers
        self.count = 0
        self.by_epoch: dict[int, list[tuple[int, oracle.Item]]] = {}
        self.classified: dict[
            int, tuple[tuple[int, tuple[str, ...]], list[tuple[int, oracle.HandoffMessage]]]
        ] = {}

    def feed(self, run: _Run, transcript: list[tuple[int, oracle.Item]]) -> None:
        by_epoch = self.by_epoch
        for seq, item in transcript[self.count :]:
            if item.kind == "extension" and (
                run.sent_by_command(seq, _NO_REQUEST_COMMANDS) or run.sent_by_replaced_session(seq)
            ):
                continue
            by_epoch.setdefault(run.epoch(seq), []).append((seq, item))
        self.count = len(transcript)


def _classified(
    items: list[tuple[int, oracle.Item]], templates: tuple[str, ...]
) -> list[tuple[int, oracle.HandoffMessage]]:
    """One epoch's items classified (:meth:`_Run.handoff_messages`), with their trace seqs."""
    seq_of = {identity(item): seq for seq, item in items}
    out = []
    for classified in oracle.classify([item for _seq, item in items], WINDOW):
        message = classified
        if message.kind == "reminder" and any(t in message.item.text for t in templates):
            # It carries a Call template: a Call instruction sent again, not a reminder.
            message = oracle.HandoffMessage(message.item, "call")
        out.append((seq_of[identity(message.item)], message))
    return out


@dataclass
class _Fold:
    """A scanner (:meth:`_Run.fold`) and what it read: of which list, how many items, and its
    ``deps`` then."""

    source: object
    state: Any
    count: int = 0
    deps: Hashable = None


@dataclass
class _Memo:
    """What the checks of one run (after every operation, then at its end) share: a session file
    parsed while its size and modification time stay the same (Pi only appends to one), and the
    oracle's reading of the entry appended at a trace position (an entry never changes once
    appended; keyed with whether the extension sent it). Without them, checking after every
    operation parsed every file and read every entry again each time.

    Since December 2026 also every reading that only grows as the run goes on (issue 16: the
    checks read the run again from its start after every operation, so blitz exploration ran
    at 169 operations per CPU second against 313 with the checks at the end only): the
    scanners of the trace (:meth:`fold`), the session files (read on where they were appended
    to), each session's entries by id and tool exchanges, and the entries, transcript,
    producers and request epochs of :class:`_Run`. Each is read again from the start where what
    it read was not only appended to: the trace list replaced or cut, a file rewritten, a
    session's entries other objects than those read (a session switch reads the session that
    was live from its file), an entry found after its record was read; the tests of
    ``tests/blitz/test_incremental_checks.py`` make each case."""

    #: Per file: (size, mtime) when read, its text then, and its records.
    files: dict[str, tuple[tuple[int, int], str, list[dict[str, Any]]]] = field(default_factory=dict)
    items: dict[tuple[int, bool], oracle.Item] = field(default_factory=dict)
    #: Per filter (:meth:`selected`): the trace's record list, how many of its records were read,
    #: and the ones kept. The trace only appends, and a record never changes once emitted, so
    #: what a filter keeps of a prefix is a prefix of what it keeps of the whole.
    selections: dict[str, tuple[list[dict[str, Any]], int, list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    #: The scanners of :meth:`fold`, by name.
    folds: dict[str, _Fold] = field(default_factory=dict)
    #: Per session (:meth:`index`): its entries read, and their ids.
    indexes: dict[str, tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]] = field(default_factory=dict)
    #: How many times a session's entries were not those read before (:meth:`index`).
    generation: int = 0
    #: The readings of :class:`_Run` kept across checks that are not record folds, by name.
    scans: dict[str, Any] = field(default_factory=dict)
    #: Per Call template file (:meth:`_Run.call_templates`): (size, mtime) when read, its text.
    templates: dict[str, tuple[tuple[int, int], str]] = field(default_factory=dict)
    #: Per key (:meth:`extended`): the items read, and the scanner fed with them.
    extensions: dict[str, tuple[list[Any], _Pairing]] = field(default_factory=dict)

    def selected(
        self,
        name: str,
        trace: list[dict[str, Any]],
        records: list[dict[str, Any]],
        keep: Callable[[dict[str, Any]], bool],
    ) -> list[dict[str, Any]]:
        """The ``records`` (a copy of ``trace``) ``keep`` keeps, reading only those added since
        the last call (all again if the trace was replaced or cut)."""
        source, count, kept = self.selections.get(name, (trace, 0, []))
        if source is not trace or count > len(records):
            count, kept = 0, []
        # Extended in place: no reading keeps a selection from one check to the next.
        kept.extend(filter(keep, records[count:]))
        self.selections[name] = (trace, len(records), kept)
        return kept

    def fold(self, name: str, run: _Run, make: Callable[[], S], deps: Callable[[int], Hashable] | None) -> S:
        """:meth:`_Run.fold` with what the last check left."""
        trace, records = run.host.trace.records, run.records
        known = self.folds.get(name)
        if (
            known is None
            or known.source is not trace
            or known.count > len(records)
            or (deps is not None and deps(known.count) != known.deps)
        ):
            known = self.folds[name] = _Fold(trace, make())
        known.state.feed(run, records[known.count :])
        known.count = len(records)
        known.deps = deps(known.count) if deps is not None else None
        state: S = known.state
        return state

    def extended(self, key: str, items: list[Any], make: Callable[[], _Pairing]) -> _Pairing:
        """``make()``'s pairing fed ``items`` (tagged None), going on from the last call's when
        ``items`` begin with the very objects it read (else from the start)."""
        known = self.extensions.get(key)
        if known is not None and len(known[0]) <= len(items) and all(map(operator.is_, known[0], items)):
            done, pairing = known
        else:
            done, pairing = [], make()
        pairing.feed(None, [(None, item) for item in items[len(done) :]])
        self.extensions[key] = (list(items), pairing)
        return pairing

    def index(
        self, sources: dict[str, list[dict[str, Any]]]
    ) -> tuple[dict[str, dict[str, dict[str, Any]]], int]:
        """Each session's entries by id (the last of an id wins), and :attr:`generation`: it
        changes when a session's entries no longer begin with those read before (a file
        rewritten or removed), or an appended entry takes the id of an earlier one, so that what
        was found by id before may be found otherwise.

        The entries read before are recognised by identity, or else as the same data
        (:func:`_same_data`): when the live session becomes a file (a session switch), its
        entries are read from the file, other objects holding what the live ones held. Counted
        as a change, that read the entries, their producers, the transcript and its request
        epochs again from the run's start, 2.5 times the trace per blitz seed and a tenth of its
        checks (issue 16); what is found by id is the same data either way."""
        for key in [key for key in self.indexes if key not in sources]:
            del self.indexes[key]
            self.generation += 1
        out = {}
        for key, entries in sources.items():
            known = self.indexes.get(key)
            if (
                known is not None
                and len(known[0]) <= len(entries)
                and (
                    all(map(operator.is_, known[0], entries))
                    or _same_data(known[0], entries[: len(known[0])])
                )
            ):
                done, by_id = known
            else:
                if known is not None:
                    self.generation += 1
                done, by_id = [], {}
            for entry in entries[len(done) :]:
                entry_id = str(entry.get("id"))
                if entry_id in by_id:
                    self.generation += 1
                by_id[entry_id] = entry
            self.indexes[key] = (list(entries), by_id)
            out[key] = by_id
        return out, self.generation

    def lines(self, path: Path) -> list[dict[str, Any]]:
        """:func:`_lines` of ``path``: as last read while its size and modification time stay;
        when the file grew by whole lines after the text read before (Pi appends to a session
        file), that text's records and the new lines' (the records read before stay the same
        objects); else parsed again (a file rewritten, cut or unreadable)."""
        try:
            stat = path.stat()
        except OSError:
            return []
        stamp = (stat.st_size, stat.st_mtime_ns)
        known = self.files.get(str(path))
        if known is not None and known[0] == stamp:
            return known[2]
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return []
        if known is not None and known[2] and known[1].endswith("\n") and text.startswith(known[1]):
            added = _parsed(text[len(known[1]) :])
            records = known[2] + added if added is not None else []
        else:
            records = _parsed(text) or []
        self.files[str(path)] = (stamp, text, records)
        return records


def _same_data(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """Whether the entries ``a`` and ``b`` hold the same data, so that no reader of one can tell
    it from the other: equal (``==``, which also tells a tuple from a list) and written the same
    as JSON (``==`` alone lets ``{"n": 1}`` equal ``{"n": True}`` or ``{"n": 1.0}``, and mappings
    whose keys come in another order, which ``str`` or a walk tells apart). Both are compared in
    C: a walk in Python of every entry of a session was a quarter of what it saved."""
    if a != b:
        return False
    try:
        return json.dumps(a) == json.dumps(b)
    except (TypeError, ValueError):  # not JSON data: not known to be the same
        return False


def _parsed(text: str) -> list[dict[str, Any]] | None:
    """The records of a JSON-lines text (None: a line is no JSON)."""
    try:
        return [json.loads(line) for line in jsonl_lines(text) if line.strip()]
    except json.JSONDecodeError:
        return None


def _user_text(entry: dict[str, Any]) -> str | None:
    """The text of a user message entry (None: the entry is no user message)."""
    message = entry.get("message") or {}
    if entry.get("type") != "message" or message.get("role") != "user":
        return None
    return _text(message.get("content"))


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in jsonl_lines(path.read_text(encoding="utf-8")) if line.strip()]
    except (OSError, json.JSONDecodeError):
        return []


def _paired_tool_results(
    entries: Iterable[tuple[T, dict[str, Any]]],
) -> Iterator[tuple[T, str, dict[str, Any], dict[str, Any]]]:
    """(the entry's tag, tool name, call arguments, result message) of every tool result in
    ``entries`` (``(tag, entry)`` in transcript order), each paired with the call that asked for it
    by its ``toolCallId`` (:class:`_Pairing`)."""
    pairing = _Pairing()
    pairing.feed(None, entries)
    yield from pairing.paired


def _tool_exchanges(entries: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(tool name, call arguments, result message) in transcript order."""
    for _tag, name, arguments, message in _paired_tool_results((None, entry) for entry in entries):
        yield name, arguments, message


def _submitted_dossiers(run: RunReading) -> set[str]:
    return run.once("submitted_dossiers", lambda: _find_submitted_dossiers(run))


def _find_submitted_dossiers(run: RunReading) -> set[str]:
    submitted: set[str] = set()
    for exchanges in run.session_exchanges():
        dossier = None
        for name, _arguments, result in exchanges:
            if name == GET and not result.get("isError"):
                dossier = _dossier_in(_text(result.get("content"))) or dossier
            if name == FINISH and not result.get("isError") and dossier:
                submitted.add(dossier)
    return submitted


def _per_request(run: _Run, kind: str) -> dict[int, int]:
    """How many messages of ``kind`` (call, reminder, emergency) the extension sent per request
    (counted for every kind at once, once per check: three invariants read them)."""
    return run.once("per_request", lambda: _count_per_request(run)).get(kind, {})


def _count_per_request(run: _Run) -> dict[str, dict[int, int]]:
    counts: dict[str, dict[int, int]] = {}
    for _seq, epoch, message in run.handoff_messages():
        of_kind = counts.setdefault(message.kind, {})
        of_kind[epoch] = of_kind.get(epoch, 0) + 1
    return counts


Invariant = Callable[[_Run, list[dict[str, Any]]], Iterator[str]]


def captured_prompts_kept_in_order(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Captured prompts are kept unchanged in the recovery directory or delivered after capture;
    prompts found together keep their capture order (reference §3.4, §4)."""
    captured = [op["text"] for op in ops if op["kind"] == "prompt" and op.get("disposition") == "handled"]
    if not captured:
        return
    # Every request repeats the conversation so far, made of the same message objects (the
    # simulated model shares them): each message's text is made once, and most sinks are the
    # same text many times, so each distinct text is searched and judged once (issue 16), the
    # findings are the same.
    texts: dict[int, str] = {}
    delivered: list[str] = []
    for request in run.host.service.requests:
        for message in request.messages:
            key = identity(message)
            text = texts.get(key)
            if text is None:
                text = texts[key] = _text(message.get("content"))
            delivered.append(text)
    sinks = run.recovery_texts() + delivered
    patterns = {text: re.compile(r"(?m)^" + re.escape(text) + r"$") for text in captured}
    found_in: dict[str, list[tuple[int, str]]] = {}

    def positions(sink: str) -> list[tuple[int, str]]:
        """Where each captured prompt stands as a whole line (or the whole message) in ``sink``."""
        found = found_in.get(sink)
        if found is None:
            found = []
            for text in captured:
                match = patterns[text].search(sink)
                if match:
                    found.append((match.start(), text))
            found_in[sink] = found
        return found

    distinct = dict.fromkeys(sinks)
    anywhere = {text for sink in distinct for _, text in positions(sink)}
    for text in captured:
        if text not in anywhere:
            yield f"the captured prompt {text!r} is neither in a recovery file nor delivered to a model"
    in_order = {
        sink: [p for p, _ in positions(sink)] == sorted(p for p, _ in positions(sink)) for sink in distinct
    }
    for sink in sinks:
        if not in_order[sink]:
            yield f"captured prompts are out of order in {sink[:80]!r}: {[t for _, t in positions(sink)]}"


def prompts_captured_when_due(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A prompt the user sends after a successful GET of the request, before its Finish is
    accepted, is captured: its input is handled, whether Pi got it from RPC or interactively and
    whether the model was idle or streaming (a steer or a follow-up) (reference §3.4 "successful
    GET starts Writing capture. Captured interactive/RPC prompts ..."; H22, H27a).
    ``captured_prompts_kept_in_order`` judges the prompts an implementation captured; this one
    requires capturing the prompts that are due.

    Nothing is required where the trace cannot tell that the request is still capturing: before
    its first successful GET (in Request mode capture starts at the accepted request, H23, which
    no trace record marks apart from a refused start), from an accepted Finish on (a transfer that
    then fails ends the request, H123), once a ``/sh`` or any other command ran (the ``/sh`` menu's
    Cancel ends it), after a reload ("reload can end memory state") or a session switch; nor for a
    prompt Pi never handed the extension (rejected during a compaction, or held back while Pi
    emits its settled event: its operation got no disposition) or one that is a slash command."""
    due = run.fold("prompts_captured_when_due", _DueCaptures).due
    for op in ops:
        said = due.get(int(op["seq"]))
        if said is None or op["kind"] != "prompt" or op.get("disposition") in (None, "handled"):
            continue
        yield (
            f"the prompt {said!r}, sent after a successful GET and before any Finish was accepted in the "
            f"same request, was not captured (disposition {op.get('disposition')!r})"
        )


class _DueCaptures(_Scanner):
    """The prompts due for capture (:func:`prompts_captured_when_due`), record by record."""

    def __init__(self) -> None:
        self.capturing = False
        # Prompt operations begun and not ended yet (``during`` ones nest in the one they interrupt).
        self.open_prompts: list[dict[str, Any]] = []
        self.due: dict[int, str] = {}  # prompt op seq -> its text, where its input came while capturing

    #: The names of the records :meth:`feed` reads (most records have another).
    NAMES = frozenset(
        {"tool_execution_end", "runtime", "reload", "session_start", "command", "prompt", "input"}
    )

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        capturing, open_prompts, due = self.capturing, self.open_prompts, self.due
        names = self.NAMES
        for record in records:
            if record["name"] not in names:
                continue
            kind, name, begins = record["kind"], record["name"], record.get("phase") != "end"
            tool = record.get("toolName") if kind == "session" and name == "tool_execution_end" else None
            if tool is not None and not record.get("isError"):
                capturing = tool == GET or (capturing and tool != FINISH)
            elif (
                (kind == "host" and name in ("runtime", "reload"))
                or (kind == "event" and name == "session_start")
                or (kind == "op" and name == "command" and begins)
            ):
                capturing = False
            elif kind == "op" and name == "prompt":
                if begins:
                    open_prompts.append(record)
                elif open_prompts:
                    open_prompts.pop()
            elif kind == "event" and name == "input" and record.get("source") != "extension" and capturing:
                text = str(record.get("text", ""))
                op = next((o for o in reversed(open_prompts) if str(o.get("text", "")) == text), None)
                if op is not None and not text.startswith("/"):
                    due[int(op["seq"])] = text
        self.capturing = capturing


def dossier_kept_until_receiver_turn(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """After an accepted Finish the implementation never removes the dossier before the receiver's
    bootstrap turn settled (reference §3.7; the receiver model deletes it, not the extension)."""
    submitted = _submitted_dossiers(run)
    if not submitted:
        return
    # Every removal is kept and judged against the dossiers submitted so far (one submitted
    # later makes a removal read before a violation): before, the removals were read again from
    # the run's start whenever a dossier was submitted, a sixteenth of a blitz seed's checks.
    for path in run.fold("dossier_kept_until_receiver_turn", _DossierRemovals).removals:
        if path in submitted:
            yield f"the implementation removed the submitted dossier {path} before the receiver's turn settled"


class _DossierRemovals(_Scanner):
    """The implementation's removals of files while a Finish is accepted and the receiver's turn
    has not settled (:func:`dossier_kept_until_receiver_turn`), record by record."""

    def __init__(self) -> None:
        self.pending = self.switched = False
        #: The paths removed (or replaced) then, in trace order.
        self.removals: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        pending, switched = self.pending, self.switched
        for record in records:
            kind, name = record["kind"], record["name"]
            if kind == "session" and name == "tool_execution_end" and record.get("toolName") == FINISH:
                pending = pending or not record.get("isError")
            elif kind == "event" and name == "session_start" and record.get("reason") == "new":
                switched = pending
            elif kind == "session" and name == "agent_settled" and switched and not record.get("aborted"):
                pending = switched = False
            elif _is_cancel(record) and not switched:
                # A cancel before the cutover ends the request, and its cleanup removes the owned
                # reservation "even after Finish" (reference Cancel); a writer's turn aborted after
                # its Finish (a compaction's or a session switch's abort) leaves that state.
                pending = False
            elif kind == "fs" and name in ("remove", "replace") and pending:
                self.removals.append(run.real(str(record.get("to" if name == "replace" else "path", ""))))
        self.pending, self.switched = pending, switched


def _template_responses(run: _Run) -> list[tuple[int, _Exchange]]:
    """(trace seq, exchange) of every template retrieval: the trace's executions paired in
    order with the results the sessions recorded for them."""
    return run.once("template_responses", lambda: _find_template_responses(run))


def _find_template_responses(run: _Run) -> list[tuple[int, _Exchange]]:
    """The results in the order the trace recorded their entries (:func:`_exchanges`), not
    session file by session file: once the user resumes an earlier session, its file gets
    results later than another file's, and pairing the files' results in file order with the
    trace's executions paired a retrieval with another's result (the explorer's resume
    intrusions found it: the reference's "No active Session Handoff request" read as a Finish
    ID of an earlier request, and ``one_active_request`` failed it). A fork's copy of the
    entries before its fork point is no append, so each result comes once."""
    executions = run.selected("get_executions", _is_get_execution)
    results = [exchange for exchange in _exchanges(run) if exchange.name == GET]
    return [(int(record["seq"]), result) for record, result in zip(executions, results, strict=False)]


def _is_get_execution(record: dict[str, Any]) -> bool:
    return (
        record["kind"] == "session"
        and record["name"] == "tool_execution_end"
        and record.get("toolName") == GET
    )


def _get_results(run: _Run) -> list[tuple[int, str | None]]:
    """(trace seq, Finish ID) of every template response, in order (None: an error result);
    made once per check (``one_active_request`` and ``user_operation_blocked_while_protected`` read
    it)."""
    return run.once("get_results", lambda: _find_get_results(run))


def _find_get_results(run: _Run) -> list[tuple[int, str | None]]:
    return [
        (seq, None if result.error else oracle.finish_id_in(result.text))
        for seq, result in _template_responses(run)
    ]


def _call_seqs(run: _Run) -> set[int]:
    """The trace positions of the Call instructions (made once per check: four readings of the
    request's state need them)."""
    return run.once(
        "call_seqs",
        lambda: {seq for seq, _epoch, message in run.handoff_messages() if message.kind == "call"},
    )


def _call_instructions(run: _Run) -> list[tuple[int, str]]:
    """(trace seq, text) of every Call instruction sent to the model (as a prompt or steering)."""
    return [(seq, m.item.text) for seq, _epoch, m in run.handoff_messages() if m.kind == "call"]


def one_active_request(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Until a cancel, a reload or a session switch, every successful GET carries the same Finish
    ID and at most one Call instruction is sent (reference §3.1, one active request)."""
    for count in _per_request(run, "call").values():
        if count > 1:
            yield "another Call instruction was sent while a request was active"
    current: tuple[int, str] | None = None
    for seq, fid in _get_results(run):
        if fid is None:
            continue
        epoch = run.epoch(seq)
        if current is not None and current[0] == epoch and current[1] != fid:
            yield f"a second request replaced the active one ({current[1]} -> {fid})"
        current = (epoch, fid)


def finish_only_with_returned_id(run: RunReading, ops: list[dict[str, Any]]) -> Iterator[str]:
    """An accepted Finish carries the Finish ID of the latest successful GET, once (reference §3.5),
    and never an ID a ``/sh cancel`` invalidated: "canonical cancel immediately invalidates request,
    Finish ID, reminder, retrieval" (reference Cancel, H70a). The cancel part reads the trace (which
    operation came between the GET and the Finish), so an observed real-Pi run checks the rest."""
    for index, exchanges in enumerate(run.session_exchanges()):
        latest: str | None = None
        accepted: set[str] = set()
        for name, arguments, result in exchanges:
            if name == GET and not result.get("isError"):
                latest = oracle.finish_id_in(_text(result.get("content"))) or latest
            if name == FINISH and not result.get("isError"):
                fid = str(arguments.get("id"))
                if fid != latest:
                    yield f"session {index}: Finish accepted with a foreign ID {fid!r} (returned: {latest!r})"
                if fid in accepted:
                    yield f"session {index}: Finish accepted twice for {fid!r}"
                accepted.add(fid)
    traced = run.trace_reading()
    if traced is None or not traced.records:
        return  # an observed run: no trace, so no order of cancels and tool calls
    cancels = [int(r["seq"]) for r in traced.selected("cancels", _is_cancel)]
    returned: dict[tuple[str, str], int] = {}  # (session, Finish ID) -> the latest GET returning it
    for exchange in _exchanges(traced):
        if exchange.name == GET and not exchange.error:
            given = oracle.finish_id_in(exchange.text)
            if given:
                returned[(exchange.session, given)] = exchange.seq
        elif exchange.name == FINISH and not exchange.error:
            used = str(exchange.arguments.get("id"))
            got = returned.get((exchange.session, used))
            if got is not None and any(got < c < exchange.seq for c in cancels):
                yield f"Finish accepted with {used!r}, an ID a /sh cancel had invalidated"


def valid_finish_accepted(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A valid Finish is accepted: one that carries exactly the Finish ID the latest successful GET
    of the session returned, within the same request (no cancel, reload or session switch since
    that GET), for an ID no Finish was accepted with yet, when the dossier that GET named is a
    nonempty regular file, whatever it holds (reference §3.5 "exact returned ID only", §3.6
    "metadata-only nonempty-regular-file check": no Markdown or title check; H29a, H34c: one
    writer in seven writes a dossier without a heading, ``generate.dossier_text``). Neither a
    rejected Finish before it (H31b: "leaves request, path, dossier and session unchanged"), nor
    the reminder (H49c: "no regenerated IDs"), nor the emergency (H51: "retain current
    request/file/ID") may make it stale.
    ``finish_only_with_returned_id`` forbids accepting what is not valid; this one requires
    accepting what is. Whether the dossier is a nonempty file is read from the trace: the last
    file operation on its path before the Finish must be the model's ``write`` of a nonempty text
    (a planted file or the implementation's own write leaves it undecided, and nothing is
    required)."""
    latest: dict[str, tuple[int, str, str]] = {}  # session -> (request epoch, Finish ID, dossier)
    accepted: set[str] = set()
    for exchange in _exchanges(run):
        if exchange.name == GET and not exchange.error:
            fid = oracle.finish_id_in(exchange.text)
            dossier = _dossier_in(exchange.text)
            if fid and dossier:
                latest[exchange.session] = (run.epoch(exchange.seq), fid, dossier)
        elif exchange.name == FINISH:
            fid = str(exchange.arguments.get("id"))
            if not exchange.error:
                accepted.add(fid)
                continue
            got = latest.get(exchange.session)
            if (
                got is not None
                and got[1] == fid
                and got[0] == run.epoch(exchange.seq)
                and fid not in accepted
                and _nonempty_before(run, got[2], exchange.seq)
            ):
                yield (
                    f"a valid Finish was rejected: {fid!r} is the ID the latest template response returned "
                    f"in this request, not used yet, and {got[2]} holds the model's nonempty dossier"
                )


def finish_refused_onto_empty_dossier(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A Finish is accepted only onto a nonempty regular file ("metadata-only
    nonempty-regular-file check", reference §3.6, H34a): an accepted Finish whose dossier (the
    path the session's latest successful GET named) the model last left empty, or removed, is a
    violation. The dossier's state is read from the trace as ``valid_finish_accepted`` reads it
    (:func:`_file_states`); a planted file or the implementation's own write leaves it
    undecided, and nothing is judged."""
    dossiers: dict[str, str] = {}  # session -> the dossier its latest successful GET named
    for exchange in _exchanges(run):
        if exchange.name == GET and not exchange.error:
            dossier = _dossier_in(exchange.text)
            if dossier:
                dossiers[exchange.session] = dossier
        elif exchange.name == FINISH and not exchange.error and exchange.session in dossiers:
            dossier = dossiers[exchange.session]
            states = [state for at, state in _file_states(run, dossier) if at < exchange.seq]
            if states and states[-1] in ("empty", "gone"):
                yield f"a Finish was accepted onto {dossier}, which the model had left {states[-1]}"


def dossier_named_after_source_session(run: RunReading, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A successful template response names the dossier ``<cwd>/<CONFIG_DIR_NAME>/handoff_<native
    session id>.md``, the id of the session the GET ran in as Pi has it (its session file's
    header), unreduced ("GET supplies exclusive owner-only cwd `.pi/handoff_SESSID.md`, native
    source ID, no timestamp/subdir", reference Managed paths, H112). One seed in seven names its
    first session with an underscore and a dot (``generate.named_session_id``), which a recovery
    file's name reduces (H46a) and the dossier's must keep.

    It reads the sessions' files and entries only, so it also runs on real Pi's observations. A
    fork's file starts with copies of its parent's entries, their ids kept
    (``createBranchedSession``, session-manager.js:1226-1330), so a template response is judged
    once, by its entry id, and may name any session whose file holds that entry: the session it
    ran in, or one forked from it. Read per session file alone, each copy was taken for a
    response of the fork (seeds 14 and 19 of the reference)."""
    project = run.project_dir()
    holders: dict[str, set[str]] = {}  # a template response's entry id -> the sessions holding it
    named: dict[str, str] = {}  # that entry id -> the dossier it names
    for session_id, entries in zip(run.session_ids(), run.session_entries(), strict=True):
        for entry in entries:
            message = entry.get("message") if entry.get("type") == "message" else None
            if (
                not isinstance(message, dict)
                or message.get("role") != "toolResult"
                or message.get("toolName") != GET
                or message.get("isError")
            ):
                continue
            dossier = _dossier_in(_text(message.get("content")))
            entry_id = str(entry.get("id"))
            if dossier is None or session_id is None:
                continue
            named.setdefault(entry_id, dossier)
            holders.setdefault(entry_id, set()).add(session_id)
    for entry_id, dossier in named.items():
        expected = sorted(
            os.path.join(project, CONFIG_DIR_NAME, f"handoff_{sid}.md") for sid in holders[entry_id]
        )
        if dossier not in expected:
            yield f"a template response named the dossier {dossier}, not {' or '.join(expected)} (its session's own id)"


@dataclass(frozen=True)
class _Exchange:
    """One tool call and its result, where the trace recorded the result's entry."""

    seq: int
    session: str
    name: str
    arguments: dict[str, Any]
    text: str
    error: bool


def _exchanges(run: _Run) -> list[_Exchange]:
    """Every tool call with its result, in trace order, with the session it ran in (the entries
    placed by the trace: :meth:`_Run.entries`)."""
    return run.once("exchanges", lambda: _find_exchanges(run))


def _find_exchanges(run: _Run) -> list[_Exchange]:
    """With :attr:`_Run.memo`, only the entries found since the last check are paired (all again
    when :meth:`_Run.entries` were read again)."""
    source = run._entry_scan()
    entries = source.out
    known = run.memo.scans.get("exchanges") if run.memo is not None else None
    if not (isinstance(known, _ExchangeScan) and known.source is source and known.count <= len(entries)):
        known = _ExchangeScan(source)
        if run.memo is not None:
            run.memo.scans["exchanges"] = known
    known.pairing.feed(run, [((seq, session), entry) for seq, session, entry in entries[known.count :]])
    known.count = len(entries)
    for (seq, session), name, arguments, message in known.pairing.paired[len(known.out) :]:
        known.out.append(
            _Exchange(
                seq, session, name, arguments, _text(message.get("content")), bool(message.get("isError"))
            )
        )
    return known.out


class _ExchangeScan:
    """:func:`_exchanges` read entry by entry (of :class:`_EntryScan` ``source``)."""

    def __init__(self, source: _EntryScan) -> None:
        self.source = source
        self.count = 0
        self.pairing = _Pairing()
        self.out: list[_Exchange] = []


def _is_boundary(record: dict[str, Any]) -> bool:
    """A ``/sh cancel`` command or a new, reloaded, forked or resumed session (:meth:`_Run.boundaries`;
    a user's fork or replacement outside the protected window discards the pending request:
    reference Protection, H77e)."""
    return (
        record["kind"] == "op"
        and record["name"] == "command"
        and str(record.get("text", "")).startswith("/sh cancel")
    ) or (
        record["kind"] == "event"
        and record["name"] == "session_start"
        and record.get("reason") in ("new", "reload", "fork", "resume")
    )


def _is_extension_input(record: dict[str, Any]) -> bool:
    return record["kind"] == "event" and record["name"] == "input" and record.get("source") == "extension"


def _is_cancel(record: dict[str, Any]) -> bool:
    return (
        record["kind"] == "op"
        and record["name"] == "command"
        and record.get("phase") != "end"
        and str(record.get("text", "")).startswith("/sh cancel")
    )


def _file_states(run: _Run, path: str) -> list[tuple[int, str]]:
    """(trace seq, state) after each operation on ``path``: ``nonempty`` or ``empty`` (the model's
    ``write``), ``gone`` (removed by the model or the implementation), ``unknown`` (written by the
    implementation or planted by the scenario)."""
    return run.fold("file_states", _FileStates).states.get(path, [])


class _FileStates(_Scanner):
    """:func:`_file_states` of every path, record by record. Read again for each judged Finish
    after every operation, the whole run's file operations were a quarter of a blitz
    exploration's checks under the profiler (1.9 of 7.6 s, issue 16)."""

    def __init__(self) -> None:
        self.states: dict[str, list[tuple[int, str]]] = {}

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        states = self.states
        for record in records:
            kind, name = record["kind"], record["name"]
            seq = int(record["seq"])
            if kind == "fs":
                if name == "tool_write":
                    state = "nonempty" if int(record.get("chars") or 0) > 0 else "empty"
                elif name in ("tool_remove", "remove"):
                    state = "gone"
                elif name in ("write", "replace", "rename"):
                    state = "unknown"
                else:
                    continue
                for where in {run.real(str(record[key])) for key in ("path", "to") if record.get(key)}:
                    states.setdefault(where, []).append((seq, state))
            elif kind == "op" and name == "edit_file" and record.get("phase") != "end":
                planted = str(Path(run.host.paths.project_dir, str(record.get("path", ""))))
                states.setdefault(planted, []).append((seq, "unknown"))


def _nonempty_before(run: _Run, path: str, seq: int) -> bool:
    """Whether the last operation on ``path`` before ``seq`` was the model's nonempty write."""
    states = [state for at, state in _file_states(run, path) if at < seq]
    return bool(states) and states[-1] == "nonempty"


def _chain_length(run: _Run, path: str, limit: int) -> int:
    length, seen = 1, {path}
    header = (run.lines(_path(path)) or [{}])[0]
    parent = header.get("parentSession")
    while isinstance(parent, str) and parent and length < limit and parent not in seen:
        seen.add(parent)
        length += 1
        parent = (run.lines(_path(parent)) or [{}])[0].get("parentSession")
    return length


#: The user's operations the protection rules name: (operation, the hook Pi asks extensions
#: through, what the message calls it, whether it is a navigation, which H77e lets through
#: before the protection boundary).
_USER_OPERATIONS: tuple[tuple[str, str, str, bool], ...] = (
    ("new_session", "session_before_switch", "new session", True),
    ("switch_session", "session_before_switch", "resume of another session", True),
    ("fork", "session_before_fork", "fork", True),
    ("compact", "session_before_compact", "compaction", False),
)


def user_operation_blocked_while_protected(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """From the deferral boundary until a cancel, a reload or a session switch (the cutover's
    included), a user's new session, resume, fork or compaction is blocked; before it, a
    navigation is not: "configured deferral boundary→terminal completion/cancel protects user
    replacement/fork/compaction; Finish awaiting transition protected too ... Before protection
    navigation may discard pending request" (reference Protection, H77a-H77e). The boundary is
    the request (its Call instruction) with ``deferPromptsFrom: request``, else the successful
    template retrieval (a failed one starts no Writing, H25a); an accepted Finish follows a GET,
    so it is inside the window. An abort ends nothing ("Normal response abort/Escape no
    pause/cancel meaning", H138): Pi's compaction, new session and fork abort the running turn
    before they ask the extension. The generator holds the operation in a writer's reply, before
    or after its GET (``during``).
    The extension's chance is the operation's own ``session_before_switch`` (``_fork``,
    ``_compact``), judged by the window at that point (a cutover may follow it inside the
    operation: Pi aborts the run first). A new session, resume or fork went through when it
    ended ``ok`` (after its hook, only an extension's ``cancel`` stops one: the error
    "cancelled"); a compaction when Pi went on to summarise (a ``summary`` model request) or
    appended its entry after the hook, since the summary may then fail or be aborted
    (agent-session.js ``compact``: the hook's ``cancel`` throws "Compaction cancelled" before any
    summary request). An operation that never reached its hook (a compaction with "Nothing to
    compact", a resume with no previous session) is not judged, nor a compaction outside the
    window (H77e names navigation only)."""
    for judged in _judged_user_operations(run):
        if judged.protected and judged.went:
            yield f"the user's {judged.what} (trace {judged.begin}) went through while a handoff was protected"
        elif judged.navigation and not judged.protected and not judged.went:
            yield (
                f"the user's {judged.what} (trace {judged.begin}) was blocked outside the protected window "
                "(before the deferral boundary, or with no handoff to protect)"
            )


@dataclass(frozen=True)
class _JudgedOperation:
    """A user operation that reached its hook: inside the protection window or not, through or not."""

    kind: str
    what: str
    navigation: bool
    begin: int
    protected: bool
    went: bool


def _judged_user_operations(run: _Run) -> Iterator[_JudgedOperation]:
    """Every ended user operation of :data:`_USER_OPERATIONS` that reached its hook, judged by
    the window at the hook (:func:`user_operation_blocked_while_protected`)."""
    opened = [seq for seq, fid in _get_results(run) if fid is not None]
    if run.settings.get("deferPromptsFrom") == "request":
        opened += [seq for seq, _text in _call_instructions(run)]
        opened += [int(r["seq"]) for r in run.selected("model_starts", _is_model_start)]
    for kind, event, what, navigation in _USER_OPERATIONS:
        asked = [int(r["seq"]) for r in run.selected(f"{event}s", functools.partial(_is_event, name=event))]
        for begin, end, ok in _user_ops(run, kind):
            own = next((seq for seq in asked if begin < seq < end), None)
            if own is None:
                continue
            went = ok if kind != "compact" else _compaction_went_on(run, own, end)
            yield _JudgedOperation(kind, what, navigation, begin, _protected(run, opened, own), went)


def protection_counts(run: _Run) -> dict[str, dict[str, int]]:
    """How many user operations of each kind the protection invariant judged inside the window
    and outside it (:meth:`BlitzChecker.metrics`: what ``explore`` reports, so a run shows that
    the invariant was exercised, not only that it passed)."""
    counts: dict[str, dict[str, int]] = {"inside": {}, "outside": {}}
    for judged in _judged_user_operations(run):
        side = counts["inside" if judged.protected else "outside"]
        side[judged.kind] = side.get(judged.kind, 0) + 1
    return {side: dict(sorted(kinds.items())) for side, kinds in counts.items()}


def _is_model_start(record: dict[str, Any]) -> bool:
    """A successful ``blitz_handoff`` call: the model opened a request (its result carries the
    Call instruction, so no Call message comes)."""
    return bool(
        record["kind"] == "session"
        and record["name"] == "tool_execution_end"
        and record.get("toolName") == oracle.STATUS_TOOL
        and not record.get("isError")
    )


def _compaction_went_on(run: _Run, hook: int, end: int) -> bool:
    """Pi summarised, or appended a compaction entry, between the hook at ``hook`` and the
    operation's end at ``end``: the hook did not cancel it."""
    return any(
        hook < int(r["seq"]) < end
        for r in run.selected("summaries_or_compactions", _is_summary_or_compaction)
    )


def _is_summary_or_compaction(record: dict[str, Any]) -> bool:
    return (
        record["kind"] == "model" and record["name"] == "request" and record.get("caller") == "summary"
    ) or (record["kind"] == "entry" and record["name"] == "compaction")


def _protected(run: _Run, opened: list[int], seq: int) -> bool:
    """A window opened (a successful GET, or a request in request mode) before ``seq`` with no
    cancel, reload or session switch between."""
    epoch = run.epoch(seq)
    return any(g < seq and run.epoch(g) == epoch for g in opened)


def _is_event(record: dict[str, Any], *, name: str) -> bool:
    return bool(record["kind"] == "event" and record["name"] == name)


def _user_ops(run: _Run, kind: str) -> list[tuple[int, int, bool]]:
    """(begin, end, ok) trace positions and outcome of every ended user operation ``kind`` (held
    ``during`` ones too), in the order they began."""
    ended: list[tuple[int, int, bool]] = []
    open_: list[int] = []
    for record in run.selected(f"{kind}_ops", lambda r: r["kind"] == "op" and r["name"] == kind):
        if record.get("phase") == "end":
            if open_:
                ended.append((open_.pop(), int(record["seq"]), bool(record.get("ok"))))
        else:
            open_.append(int(record["seq"]))
    return sorted(ended)


def _is_new_runtime(record: dict[str, Any]) -> bool:
    return record["kind"] == "host" and record["name"] == "runtime" and record.get("reason") == "new"


def _is_session_start(record: dict[str, Any]) -> bool:
    return bool(record["kind"] == "event" and record["name"] == "session_start")


def receiver_link_follows_chain_limit(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A receiver is parent-linked to its source unless the source's chain (master included)
    already reached maxSessionChainLength: then it is an independent master (reference §7)."""
    limit = int(run.settings.get("maxSessionChainLength", 25))
    created = run.selected("created_sessions", _is_new_runtime)
    users = _user_ops(run, "new_session")
    for record in created:
        if any(begin < record["seq"] < end for begin, end, _ok in users):
            continue  # the user's own new session (RPC new_session): no receiver
        new_file = run.real(str(record.get("sessionFile") or ""))
        lines = run.lines(_path(new_file))
        if not lines:
            continue  # never written: nothing was delivered there
        start = next(
            (r for r in run.selected("session_starts", _is_session_start) if r["seq"] > record["seq"]), None
        )
        source = run.real(str((start or {}).get("previousSessionFile") or ""))
        parent = lines[0].get("parentSession")
        at_limit = _chain_length(run, source, limit) >= limit
        if at_limit and parent is not None:
            yield f"{new_file}: linked to {parent} although the chain reached {limit}"
        if not at_limit and parent != source:
            yield f"{new_file}: parent {parent!r}, expected the source {source}"


def one_reminder_per_request(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """At most one visible reminder per request (reference §4)."""
    for count in _per_request(run, "reminder").values():
        if count > 1:
            yield "a second reminder for the same request"


def reminder_only_while_request_waits(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A reminder belongs to a request that is still waiting for its handoff: never after that
    request's emergency instruction ("Emergency cancels the reminder", reference §4, H51) and
    never once the request has ended ("Canonical cancel/menu immediately invalidate request,
    Finish ID, reminder, retrieval", Status, cancellation and recovery, H70b).

    Read per request epoch (:meth:`_Run.boundaries`: a ``/sh cancel``, a reload or a session
    switch ends the request before it): a message classified as a reminder must come after
    something in its epoch made the request known (a Call instruction, a successful
    ``session_handoff_get_template`` or ``blitz_handoff start``, as
    :func:`~pi_continuity_harness.features.blitz_oracle.classify` knows a request) and before
    the epoch's emergency. A reminder of a cancelled request therefore shows as one in the
    epoch after the cancel, before that epoch has a request. ``one_reminder_per_request``
    bounds how many a request gets; this one, when they may come."""
    known: dict[int, int] = {}  # epoch -> the first trace seq at which its request is known
    starting = False
    for seq, item in run.transcript():
        if item.kind == "assistant":
            starting = oracle.calls_start(item)
        elif oracle.makes_request_known(item, starting):
            known.setdefault(run.epoch(seq), seq)
    escalated: dict[int, int] = {}
    templates = run.call_templates()
    for seq, epoch, message in run.handoff_messages():
        if message.kind == "call" and templates and not any(t in message.item.text for t in templates):
            # Classified as a Call by its place (the epoch's first message, naming the template
            # tool) but carrying no Call template, which every Call instruction does (H18a): a
            # reminder of the request before, which the cancel that began this epoch ended.
            if known.get(epoch, seq + 1) > seq:
                yield (
                    f"a reminder (trace seq {seq}: it names {oracle.GET_TOOL} but carries no Call template) "
                    "with no waiting request: its request ended at a cancel, a reload or a session switch"
                )
        elif message.kind == "call":
            known[epoch] = min(known.get(epoch, seq), seq)
        elif message.kind == "emergency":
            escalated.setdefault(epoch, seq)
        elif message.kind == "reminder":
            if epoch in escalated and escalated[epoch] < seq:
                yield f"a reminder (trace seq {seq}) after the request's emergency instruction (seq {escalated[epoch]})"
            elif known.get(epoch, seq + 1) > seq:
                yield (
                    f"a reminder (trace seq {seq}) with no waiting request: its request ended at a cancel, "
                    "a reload or a session switch, or never began"
                )


def emergency_once_at_90_percent(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """With a requested, unsubmitted handoff, the first completed turn at or above 90% gets the
    fixed emergency instruction, once per request; never without a request, and never after a
    turn below 90 %: the level is fixed whatever criticalWarningPercent, contextWarningPercent
    or automaticSessionHandoffPercent say (reference §4)."""
    emergencies = _per_request(run, "emergency")
    messages = _messages_before(run)
    yield from run.fold("emergency_turns", _EmergencyTurns, messages).problems
    for count in emergencies.values():
        if count > 1:
            yield "a second emergency instruction for the same request"
    owing = run.fold("emergency_owed", _EmergencyOwed, messages)
    yield from owing.problems
    owed = owing.owed
    if run.over and owed is not None and not emergencies.get(owed):
        yield "a completed turn at or above 90% with an unsubmitted request got no emergency instruction"


def _messages_before(run: _Run) -> Callable[[int], Hashable]:
    """``deps`` (:meth:`_Run.fold`) of a scanner that reads the handoff messages: (seq, epoch,
    kind) of those among the first ``count`` records."""
    messages = run.handoff_messages()

    def before(count: int) -> Hashable:
        return tuple((seq, epoch, m.kind) for seq, epoch, m in messages if seq < count)

    return before


class _EmergencyTurns(_Scanner):
    """The first emergency instruction after a turn below 90 % (:func:`emergency_once_at_90_percent`)."""

    def __init__(self) -> None:
        self.last_turn: int | None = None
        self.problems: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        if self.problems:
            return
        emergency_seqs = {seq for seq, _e, message in run.handoff_messages() if message.kind == "emergency"}
        last_turn = self.last_turn
        for record in records:
            if (
                record["kind"] == "model"
                and record["name"] == "reply"
                and record.get("caller") == "agent"
                and record.get("stopReason") in ("stop", "toolUse")
            ):
                last_turn = int(record.get("totalTokens") or 0)
            elif (
                int(record["seq"]) in emergency_seqs
                and last_turn is not None
                and last_turn < math.ceil(0.9 * WINDOW)
            ):
                self.problems.append(
                    f"an emergency instruction after a turn at {last_turn} tokens, below 90% of {WINDOW}"
                )
                break
        self.last_turn = last_turn


class _EmergencyOwed(_Scanner):
    """The emergencies owed and not sent by a request's end (:func:`emergency_once_at_90_percent`),
    and the request (epoch) owed one now."""

    def __init__(self) -> None:
        self.active = self.submitted = False
        self.owed: int | None = None
        self.problems: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        emergencies = _per_request(run, "emergency")
        calls = {seq for seq, _t in _call_instructions(run)}
        boundaries = set(run.sorted_boundaries())
        active, submitted, owed = self.active, self.submitted, self.owed
        for record in records:
            seq = int(record["seq"])
            kind, name = record["kind"], record["name"]
            if name not in ("tool_execution_end", "reply") and seq not in calls and seq not in boundaries:
                continue  # none of the tests below holds (most records)
            if seq in calls or (
                kind == "session"
                and name == "tool_execution_end"
                and record.get("toolName") == GET
                and not record.get("isError")
            ):
                active = True
            if kind == "session" and name == "tool_execution_end" and record.get("toolName") == FINISH:
                submitted = submitted or not record.get("isError")
            if seq in boundaries:
                if owed is not None and not emergencies.get(owed):
                    self.problems.append(
                        "a completed turn at or above 90% with an unsubmitted request got no emergency instruction"
                    )
                active = submitted = False
                owed = None
            if (
                kind == "model"
                and name == "reply"
                and record.get("caller") == "agent"
                and record.get("stopReason") in ("stop", "toolUse")
                and (record.get("totalTokens") or 0) >= math.ceil(0.9 * WINDOW)
                and active
                and not submitted
                and owed is None
            ):
                owed = run.epoch(seq)
        self.active, self.submitted, self.owed = active, submitted, owed


def _request_starts(run: _Run) -> list[int]:
    """Trace positions of every explicit start: a ``/sh`` command or a ``blitz_handoff`` call."""
    return [int(r["seq"]) for r in run.selected("request_starts", _is_request_start)]


def _is_request_start(r: dict[str, Any]) -> bool:
    return (r["kind"] == "op" and r["name"] == "command" and str(r.get("text", "")).startswith("/sh")) or (
        r["kind"] == "session"
        and r["name"] == "tool_execution_end"
        and r.get("toolName") == oracle.STATUS_TOOL
    )


def automatic_initiation_budget(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Automatic requests only when enabled with a nonzero threshold, at most two per session
    between successful compactions (reference §4, automatic). A Call instruction is automatic
    when nothing started its request explicitly (no ``/sh`` command, no ``blitz_handoff`` call
    in its request before it)."""
    enabled = (
        bool(run.settings.get("automaticSessionHandoff"))
        and run.settings.get("automaticSessionHandoffPercent", 70) != 0
    )
    budget = run.fold(
        "automatic_initiation_budget", lambda: _AutomaticBudget(enabled), _automatic_before(run)
    )
    yield from budget.problems


def _automatic_before(run: _Run) -> Callable[[int], Hashable]:
    """``deps`` (:meth:`_Run.fold`) of a scanner that reads the automatic Call instructions and
    the Call instructions: those among the first ``count`` records."""
    automatic = _automatic_calls(run)
    calls = _call_seqs(run)

    def before(count: int) -> Hashable:
        return (
            frozenset(seq for seq in automatic if seq < count),
            frozenset(seq for seq in calls if seq < count),
        )

    return before


class _AutomaticBudget(_Scanner):
    """Automatic requests per session between compactions (:func:`automatic_initiation_budget`)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.counts: dict[str, int] = {}
        self.session = ""
        self.problems: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        automatic = _automatic_calls(run)
        counts, session, enabled = self.counts, self.session, self.enabled
        for record in records:
            if record["kind"] == "host" and record["name"] == "runtime":
                session = str(record.get("sessionFile") or "")
            elif record["kind"] == "entry" and record["name"] == "compaction":
                counts[session] = 0
            elif int(record["seq"]) in automatic:
                counts[session] = counts.get(session, 0) + 1
                if not enabled:
                    self.problems.append(
                        f"{session}: an automatic request although automatic initiation is off"
                    )
                elif counts[session] == 3:
                    self.problems.append(
                        f"{session}: a third automatic request without a compaction in between"
                    )
        self.session = session


def _automatic_calls(run: _Run) -> set[int]:
    """Trace positions of the automatic Call instructions: those nothing started explicitly (no
    ``/sh`` command, no ``blitz_handoff`` call in their request before them)."""
    return run.once("automatic_calls", lambda: _find_automatic_calls(run))


def _find_automatic_calls(run: _Run) -> set[int]:
    explicit = [(run.epoch(seq), seq) for seq in _request_starts(run)]
    return {
        seq
        for seq, epoch, message in run.handoff_messages()
        if message.kind == "call" and not any(e == epoch and s < seq for e, s in explicit)
    }


def automatic_request_when_due(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Enabled, automatic initiation is not only bounded but owed: a completed turn at or above the
    automatic threshold, with no request active and nothing spent of the budget since the last
    successful compaction, gets an automatic Call instruction as steering before the next model
    turn (reference §4 Automatic, "enabled: first completed qualifying turn inserts request as
    steering before next model turn"; H15, H56a: a follow-up, which waits for the run's end, comes
    after the next model turn when the due turn called a tool); after one automatic attempt that was cancelled, the
    first completed turn at or above ``criticalWarningPercent`` gets the final one ("one final
    eligible at critical threshold"; H58); a successful compaction restores the budget, across a
    reload too ("native metadata retains budget across reload; successful manual/threshold/overflow
    compaction resets"; H59, H60a). ``automatic_initiation_budget`` bounds automatic requests from
    above; this one requires the request that is due.

    Nothing is required where a start would rightly be refused or the trace cannot tell: automatic
    off or its percent 0 (H54, H55), an invalid ``config.json`` (H106), an in-memory session (H1),
    a file at the session's dossier path (a leftover blocks the reservation, reference §5), a
    request that may still be active (from a Call instruction, a successful GET or
    ``blitz_handoff`` call until a ``/sh cancel`` or a session switch; a reload may or may not end
    it: "reload can end memory state"). A turn counts by its reply's own tokens, a lower bound of
    the context use the implementation sees at the turn's end."""
    settings = run.settings
    if (
        not settings.get("automaticSessionHandoff")
        or settings.get("automaticSessionHandoffPercent", 70) == 0
        or config_problem(run.scenario) is not None
        or run.scenario.session == "memory"
    ):
        return
    levels = (
        float(settings.get("automaticSessionHandoffPercent", 70)),
        float(settings.get("criticalWarningPercent", 90)),
    )
    due = run.fold("automatic_request_when_due", lambda: _AutomaticDue(levels), _automatic_before(run))
    yield from due.problems
    session, owed = due.session, due.owed
    if run.over and owed is not None:
        yield (
            f"{session}: a completed turn at {owed[0]} tokens (>= {owed[1]:g}% of {WINDOW}) with no active "
            "request and automatic budget left got no automatic request"
        )


class _AutomaticDue(_Scanner):
    """The automatic requests due and not sent (:func:`automatic_request_when_due`), record by record."""

    def __init__(self, levels: tuple[float, float]) -> None:
        self.levels = levels
        self.exists: dict[str, bool] = {}
        self.attempts: dict[str, int] = {}
        self.session = self.session_id = ""
        self.active = self.after_turn = False
        self.tokens: int | None = None
        self.owed: tuple[int, float] | None = None  # (tokens of the due turn, the level it reached)
        self.problems: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        levels = self.levels
        automatic = _automatic_calls(run)
        calls = _call_seqs(run)
        exists, attempts = self.exists, self.attempts
        session, session_id = self.session, self.session_id
        active, after_turn = self.active, self.after_turn
        tokens, owed = self.tokens, self.owed
        for record in records:
            seq, kind, name = int(record["seq"]), record["kind"], record["name"]
            _track_file(run, record, exists)
            if seq in calls:
                # A Call instruction between a turn's end and the next model turn is steering, the
                # automatic route's delivery (command and model Calls start a run from idle); counted
                # as spent whichever way it is classified (more spent, less required).
                if seq in automatic or after_turn:
                    attempts[session] = attempts.get(session, 0) + 1
                active, owed = True, None
            elif _accepted_by_tool(record):
                active = True
            new_session = _is_new_session(record)
            agent_reply = kind == "model" and name == "reply" and record.get("caller") == "agent"
            run_end = kind == "event" and name == "agent_end"
            if owed is not None and (_is_cancel(record) or new_session or agent_reply or run_end):
                self.problems.append(
                    f"{session}: a completed turn at {owed[0]} tokens (>= {owed[1]:g}% of {WINDOW}) with no "
                    "active request and automatic budget left got no automatic request before the next model turn"
                )
                owed = None
            if agent_reply or run_end:
                after_turn = False
            if kind == "host" and name == "runtime":
                forked_from = session
                session, session_id = str(record.get("sessionFile") or ""), str(record.get("sessionId") or "")
                if record.get("reason") == "fork":
                    # A fork copies the branch up to the fork point, the native metadata of spent
                    # attempts with it: all of the source's counted (more spent, less required).
                    attempts[session] = attempts.get(forked_from, 0)
            elif kind == "entry" and name == "compaction":
                attempts[session] = 0
            elif _is_cancel(record) or new_session:
                active = False
            elif agent_reply:
                completed = record.get("stopReason") in ("stop", "toolUse")
                tokens = int(record.get("totalTokens") or 0) if completed else None
            elif kind == "event" and name == "turn_end":
                after_turn = True
                spent = attempts.get(session, 0)
                dossier = _dossier_of(run, session_id)
                if (
                    tokens is not None
                    and spent < len(levels)
                    and not active
                    and not exists.get(dossier)
                    and tokens * 100 >= levels[spent] * WINDOW
                ):
                    owed = (tokens, levels[spent])
                tokens = None
        self.session, self.session_id = session, session_id
        self.active, self.after_turn = active, after_turn
        self.tokens, self.owed = tokens, owed


def _track_file(run: _Run, record: dict[str, Any], exists: dict[str, bool]) -> None:
    """Whether each file a record names exists after it: written, replaced or renamed onto by the
    implementation or the model's tools, removed by either, planted by the scenario (whose
    ``edit_file`` names a project path)."""
    kind, name = record["kind"], record["name"]
    if kind == "fs" and name in ("write", "tool_write", "replace", "rename"):
        exists[run.real(str(record.get("to" if name in ("replace", "rename") else "path", "")))] = True
    elif kind == "fs" and name in ("remove", "tool_remove"):
        exists[run.real(str(record.get("path", "")))] = False
    elif kind == "op" and name == "edit_file" and record.get("phase") != "end":
        exists[str(Path(run.host.paths.project_dir, str(record.get("path", ""))))] = True


def _accepted_by_tool(record: dict[str, Any]) -> bool:
    """A successful template response or ``blitz_handoff`` call: a request may be active from
    here (a template request may start one, H21; the model's start is one, H11b)."""
    return (
        record["kind"] == "session"
        and record["name"] == "tool_execution_end"
        and record.get("toolName") in (GET, oracle.STATUS_TOOL)
        and not record.get("isError")
    )


def _is_new_session(record: dict[str, Any]) -> bool:
    """A session switch (new, fork or resume): it ends the source's request."""
    return (
        record["kind"] == "event"
        and record["name"] == "session_start"
        and record.get("reason") in ("new", "fork", "resume")
    )


def _dossier_of(run: _Run, session_id: str) -> str:
    """The dossier path of a session (reference §5: ``<cwd>/.pi/handoff_<session id>.md``)."""
    return str(Path(run.host.paths.project_dir, CONFIG_DIR_NAME, f"handoff_{session_id}.md"))


def explicit_start_makes_request(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """``/sh start``, or Start picked in the ``/sh`` menu, initiates a request whatever the
    context use: its Call instruction is sent before the user's next operation (reference,
    Transfer sequence 1: "Exactly three initiation routes: command/menu, ...", "Explicit ignores
    thresholds"; H11a, H12). ``one_active_request`` and ``invalid_config_refuses_starts`` judge
    the starts that must be refused; this one requires the start that must not be.

    Nothing is required where a start may rightly be refused or the trace cannot tell: an
    invalid ``config.json`` (H106), an in-memory session (H1a), a file at the session's dossier
    path ("Foreign collision untouched": the reference refuses to reserve over it), a request
    that may still be active
    (from a Call instruction, a successful template response or ``blitz_handoff`` call until a
    ``/sh cancel`` or a session switch, H13; a reload may or may not end it). A menu counts as a
    start only when the menu the implementation showed had its Start entry picked, so an
    implementation without a menu is judged by its ``/sh start`` alone."""
    starts = _explicit_starts(run)
    yield from starts.unanswered
    if run.over and starts.open is not None and starts.open.owed:
        yield starts.open.unanswered()


def refused_start_said_aloud(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """An explicit start that sends no Call instruction tells the user why: a notification
    before the user's next operation (reference, Requirements: "reject ``--no-session``/in-memory
    source", H1a; Transfer sequence 1: "second rejects without replacing state", H13; Managed
    paths: "unknown keys/invalid shapes errors", which H106 reads as "a loud error"). Judged
    where Pi's mode shows notifications (``rpc``, ``tui``); the refusal's wording and level are
    the implementation's."""
    if not run.has_ui:
        return
    starts = _explicit_starts(run)
    yield from starts.silent
    if run.over and starts.open is not None and not starts.open.notified:
        yield starts.open.silent()


def _explicit_starts(run: _Run) -> _ExplicitStarts:
    calls = _call_seqs(run)
    owed = config_problem(run.scenario) is None and run.scenario.session != "memory"
    return run.fold(
        "explicit_starts",
        lambda: _ExplicitStarts(owed),
        lambda count: frozenset(seq for seq in calls if seq < count),
    )


#: How the ``/sh`` menu's Start entry begins (reference §2 Interface: "primary entry Start when
#: inactive", H6); the menu's title is the implementation's, so the first dialog of a bare ``/sh``
#: is taken for the menu.
_MENU_START = "Start"


@dataclass
class _Start:
    """An explicit start not yet answered by a Call instruction."""

    seq: int  # the trace position of its operation
    what: str
    owed: bool  # nothing allowed a refusal (:func:`explicit_start_makes_request`)
    notified: bool = False

    def unanswered(self) -> str:
        return (
            f"{self.what} (trace seq {self.seq}) with no request active, a valid config and no file at "
            "the session's dossier path sent no Call instruction before the next operation"
        )

    def silent(self) -> str:
        return f"{self.what} (trace seq {self.seq}) sent no Call instruction and no notification saying why"


class _ExplicitStarts(_Scanner):
    """The explicit starts and how each was answered (:func:`explicit_start_makes_request`,
    :func:`refused_start_said_aloud`), record by record."""

    def __init__(self, owed: bool) -> None:
        self.owed = owed  # a start can be owed in this run at all (a valid config, a session file)
        self.exists: dict[str, bool] = {}
        self.active = False
        self.session_id = ""
        self.menu: int | None = None  # the trace position of the open ``/sh`` menu operation
        self.open: _Start | None = None  # the latest start, until its Call or the next operation
        self.unanswered: list[str] = []
        self.silent: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        calls = _call_seqs(run)
        for record in records:
            seq, kind, name = int(record["seq"]), record["kind"], record["name"]
            _track_file(run, record, self.exists)
            if seq in calls:
                self.active, self.open = True, None
            elif _accepted_by_tool(record):
                self.active = True
            if _is_new_session(record) or _is_cancel(record):
                self.active = False
            if kind == "host" and name == "runtime":
                self.session_id = str(record.get("sessionId") or "")
            elif kind == "ui" and name == "notify" and self.open is not None:
                self.open.notified = True
            elif kind == "op" and not record.get("during") and record.get("phase") != "end":
                self._close()
                text = str(record.get("text", "")).strip() if name == "command" else ""
                if text == "/sh start":
                    self._start(run, seq, "/sh start")
                elif text == "/sh":
                    self.menu = seq
            elif kind == "ui" and name == "select" and self.menu is not None:
                if _picked(record).startswith(_MENU_START):
                    self._start(run, self.menu, "Start in the /sh menu")
                self.menu = None

    def _close(self) -> None:
        start, self.open, self.menu = self.open, None, None
        if start is not None:
            if start.owed:
                self.unanswered.append(start.unanswered())
            if not start.notified:
                self.silent.append(start.silent())

    def _start(self, run: _Run, seq: int, what: str) -> None:
        owed = self.owed and not self.active and not self.exists.get(_dossier_of(run, self.session_id))
        self.open = _Start(seq, what, owed)


def _picked(select: dict[str, Any]) -> str:
    """The option a traced ``select`` dialog answered (``""`` when dismissed): the first option
    its scripted ``/pattern/`` matches, or the option named."""
    answer = select.get("answer")
    choice = answer.get("select") if isinstance(answer, dict) else None
    if not isinstance(choice, str):
        return ""
    options = [str(option) for option in select.get("options") or ()]
    if len(choice) > 1 and choice.startswith("/") and choice.endswith("/"):
        pattern = re.compile(choice[1:-1])
        return next((option for option in options if pattern.search(option)), "")
    return choice if choice in options else ""


def dialog_only_for_a_command(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A requested handoff proceeds from the template response to the Finish to the switch
    without asking the user anything: the extension opens a dialog (select, confirm, input,
    editor) only while a command the user typed runs (the ``/sh`` menus and settings), never in
    the model's turns or at the source's settling, where a handoff runs (reference, Public
    interface: "No Ready/Wait/Cancel choice"; Transfer sequence 5: "No GO, user-choice round";
    H8). A dialog Pi's mode cannot show is recorded all the same (``noUI``), so it is judged in
    every mode."""
    yield from run.fold("dialog_only_for_a_command", _Dialogs).problems


#: The dialogs an extension can open (``ctx.ui``), as the trace names them.
_DIALOGS = frozenset({"select", "confirm", "input", "editor"})


class _Dialogs(_Scanner):
    """The dialogs opened outside a user's command (:func:`dialog_only_for_a_command`)."""

    def __init__(self) -> None:
        self.open: list[str] = []  # the top-level operations begun and not ended
        self.problems: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        for record in records:
            kind, name = record["kind"], record["name"]
            if kind == "op" and not record.get("during"):
                if record.get("phase") == "end":
                    if self.open:
                        self.open.pop()
                else:
                    self.open.append(name)
            elif kind == "ui" and name in _DIALOGS and (not self.open or self.open[-1] != "command"):
                during = (
                    f"during the user's {self.open[-1]}" if self.open else "between the user's operations"
                )
                self.problems.append(
                    f"a {name} dialog {str(record.get('title', ''))!r} (trace seq {record['seq']}) opened "
                    f"{during}, not for a command"
                )


def switch_only_after_accepted_finish(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """The extension switches to a new session only for a request whose Finish it accepted: a
    new session no user operation opened comes after an accepted Finish in the source session,
    with no ``/sh cancel`` since (reference, Transfer sequence 5: "Missing-template/stale/duplicate
    reject"; H31a: "a rejected Finish starts no session switch"). A session the user opens
    (``new_session``, held in a reply) is the user's."""
    yield from run.fold("switch_only_after_accepted_finish", _Switches).problems


class _Switches(_Scanner):
    """The extension's session switches without an accepted Finish
    (:func:`switch_only_after_accepted_finish`), record by record."""

    def __init__(self) -> None:
        self.accepted = False  # a Finish accepted in the current session since its last cancel
        self.user_new = 0  # user ``new_session`` operations begun and not ended
        self.problems: list[str] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        for record in records:
            kind, name = record["kind"], record["name"]
            if kind == "session" and name == "tool_execution_end" and record.get("toolName") == FINISH:
                self.accepted = self.accepted or not record.get("isError")
            elif kind == "op" and name == "new_session":
                self.user_new += -1 if record.get("phase") == "end" else 1
            elif _is_cancel(record):
                self.accepted = False
            elif kind == "host" and name == "runtime" and record.get("reason") != "startup":
                if record.get("reason") == "new" and not self.user_new and not self.accepted:
                    self.problems.append(
                        f"the extension switched to session {record.get('sessionId')} (trace seq "
                        f"{record['seq']}) with no Finish accepted in the source since its last cancel"
                    )
                self.accepted = False


def settings_file_valid(run: RunReading, ops: list[dict[str, Any]]) -> Iterator[str]:
    """The saved settings always satisfy the settings table's constraints (reference §6); a
    file the scenario planted and the implementation never wrote is not a saved setting. Who
    wrote it is seen in the trace's file operations, or, where they are not observed (a
    TypeScript implementation on real Pi), by the file no longer holding what was planted."""
    path = run.managed("config.json")
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, json.JSONDecodeError):
        return
    if not _config_writes(run) and _as_planted(run.scenario, text, data):
        return
    if not isinstance(data, dict):
        return
    warning = data.get("contextWarningPercent", 60)
    critical = data.get("criticalWarningPercent", 90)
    retry = data.get("readinessRetrySeconds", 60)
    automatic = data.get("automaticSessionHandoffPercent", 70)
    if not (1 <= warning < critical <= 100):
        yield f"saved warning/critical percents {warning}/{critical} break 1 <= warning < critical <= 100"
    if not (isinstance(retry, int) and 1 <= retry <= 300):
        yield f"saved readinessRetrySeconds {retry!r} is not an integer from 1 to 300"
    if not (0 <= automatic <= 100):
        yield f"saved automaticSessionHandoffPercent {automatic!r} is outside 0..100"


def _config_writes(run: RunReading) -> list[tuple[int, str]]:
    """(trace seq, top-level operation) of every write of ``config.json`` by the implementation
    (none seen on an observed run: its file operations are not observed)."""
    traced = run.trace_reading()
    return [] if traced is None else traced.fold("config_writes", _ConfigWrites).out


class _ConfigWrites(_Scanner):
    """:func:`_config_writes`, record by record: the top-level operation running, the writes."""

    def __init__(self) -> None:
        self.top = ""
        self.out: list[tuple[int, str]] = []

    def feed(self, run: _Run, records: list[dict[str, Any]]) -> None:
        path = str(run.managed("config.json"))
        top = self.top
        for record in records:
            if record["kind"] == "op" and record.get("phase") != "end" and not record.get("during"):
                top = f"{record['name']} {record.get('text') or ''}".strip()
            elif record["kind"] == "fs" and record["name"] in ("write", "replace"):
                target = run.real(str(record.get("to" if record["name"] == "replace" else "path", "")))
                if target == path:
                    self.out.append((int(record["seq"]), top))
        self.top = top


#: The settings table's keys (reference §6), the retired ones an older config may still carry
#: (§ legacy config), and the ranges :func:`config_problem` checks.
_SETTING_KEYS = frozenset(
    {
        "contextWarningPercent",
        "criticalWarningPercent",
        "automaticSessionHandoff",
        "automaticSessionHandoffPercent",
        "deferPromptsFrom",
        "deleteHandoffAfterReading",
        "readinessRetrySeconds",
        "maxSessionChainLength",
        "recoveryDirectory",
        "templateDirectory",
        "callTemplate",
        "handoffTemplate",
        "prepareWhileWaiting",
        "writerAttempts",
        "writerRetryDelaySeconds",
    }
)


def _as_planted(scenario: Scenario, text: str, data: Any) -> bool:
    """Whether ``config.json`` still holds what the scenario's last write of it planted. False
    when the scenario never wrote it: whatever is there then is the implementation's."""
    planted = [
        op.edit_file
        for op in scenario.operations
        if isinstance(op, EditFileOp)
        and op.edit_file is not None
        and op.edit_file.path == f"{MANAGED}/config.json"
    ]
    if not planted:
        return False
    last = planted[-1]
    return bool(data == last.json_value if last.json_given else text == (last.text or ""))


def config_problem(scenario: Scenario) -> str | None:
    """Why the ``config.json`` the scenario writes first is invalid by the settings table
    (reference §6; unknown keys are errors, §9 legacy config), else None (valid, or none)."""
    for op in scenario.operations:
        edit = op.edit_file if isinstance(op, EditFileOp) else None
        if edit is None or edit.path != f"{MANAGED}/config.json":
            continue
        if not edit.json_given:
            try:
                data = json.loads(edit.text or "")
            except ValueError:
                return "not JSON"
        else:
            data = edit.json_value
        if not isinstance(data, dict):
            return "not an object"
        unknown = sorted(set(data) - _SETTING_KEYS)
        if unknown:
            return f"unknown keys {unknown}"
        warning, critical = data.get("contextWarningPercent", 60), data.get("criticalWarningPercent", 90)
        if not (1 <= warning < critical <= 100):
            return f"warning/critical {warning}/{critical}"
        return None
    return None


def invalid_config_refuses_starts(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """An invalid config file is a loud error: every start (command, model, automatic) is
    refused, so no Call instruction is sent, and the file is never rewritten automatically
    (reference §6 settings, §9 "no auto rewrite")."""
    problem = config_problem(run.scenario)
    if problem is None:
        return
    calls = _call_instructions(run)
    if calls:
        yield f"a Call instruction was sent although config.json is invalid ({problem})"
    for _seq, top in _config_writes(run):
        if not top.startswith("command /sh"):
            yield f"config.json ({problem}) was rewritten during {top or 'startup'}, not by a settings edit"
            return


def in_memory_session_starts_nothing(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """In an in-memory (``--no-session``) source session every start is refused: ``/sh start``,
    the ``blitz_handoff`` start and automatic initiation reserve no dossier and send no Call
    (reference §1 requirements: "no transcript path/native parent lineage")."""
    if run.scenario.session != "memory":
        return
    for _seq, text in _call_instructions(run):
        yield f"a Call instruction was sent from an in-memory session: {text[:80]!r}"
        return
    for _seq, path in _reserved_paths(run):
        yield f"a dossier was reserved at {path} from an in-memory session"
        return


def dossier_retained_when_deletion_off(run: RunReading, ops: list[dict[str, Any]]) -> Iterator[str]:
    """With deleteHandoffAfterReading false, every submitted dossier stays (reference §7)."""
    if run.settings.get("deleteHandoffAfterReading", True):
        return
    for path in sorted(_submitted_dossiers(run)):
        if not Path(path).exists():
            yield f"{path} was deleted although deleteHandoffAfterReading is false"


def foreign_files_untouched(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A file the extension did not create is never removed or changed (reference §5).

    A file planted where a template response had already reserved the dossier is not foreign.
    The implementation's own removal or overwrite of a foreign file (the trace's file
    operations, until the model's tools remove it or the scenario plants it again; a model's
    write over it does not make it the extension's) is a violation whatever follows. The file's
    final text is checked only when the model's own tools left it alone (a scripted writer
    writes wherever its last template response pointed: the model's doing, not the extension's).
    """
    named = _reserved_paths(run)
    by_model = [
        (int(r["seq"]), run.real(str(r.get("path", ""))))
        for r in run.selected("model_writes", _is_model_write)
    ]
    removed_by_model = [
        (seq, where)
        for (seq, where), r in zip(by_model, run.selected("model_writes", _is_model_write), strict=True)
        if r["name"] == "tool_remove"
    ]
    for op in ops:
        if op["kind"] != "edit_file" or "content" not in op:
            continue
        path = Path(run.host.paths.project_dir, op["path"])
        if any(seq < op["seq"] and str(path) == where for seq, where in named):
            continue
        # Until the model's tools remove it or the scenario plants it again, a file the extension
        # did not create sits there (a model's write over it is not the extension's either): the
        # implementation's own removal or overwrite of it is the violation, whatever follows.
        later_plants = [o["seq"] for o in ops if o["kind"] == "edit_file" and o["path"] == op["path"]]
        until = min(
            [seq for seq, where in removed_by_model if seq > op["seq"] and str(path) == where]
            + [seq for seq in later_plants if seq > op["seq"]],
            default=math.inf,
        )
        touched = next((r for r in _implementation_writes(run, str(path)) if op["seq"] < r < until), None)
        if touched is not None:
            yield f"the implementation removed or overwrote the foreign file {path}"
            continue
        if not run.over or any(seq > op["seq"] and str(path) == where for seq, where in by_model):
            continue
        later = [
            o for o in ops if o["kind"] == "edit_file" and o["path"] == op["path"] and o["seq"] > op["seq"]
        ]
        expected = later[-1]["content"] if later else op["content"]
        if not path.exists() or path.read_text(encoding="utf-8") != expected:
            yield f"the foreign file {path} was removed or changed"


def _implementation_writes(run: _Run, path: str) -> list[int]:
    """Trace positions where the implementation (not a model tool) removed, replaced or wrote
    ``path``."""
    return [
        int(r["seq"])
        for r in run.selected("implementation_writes", _is_implementation_write)
        if path in (run.real(str(r.get("path", ""))), run.real(str(r.get("to", ""))))
    ]


def _is_model_write(record: dict[str, Any]) -> bool:
    return record["kind"] == "fs" and record["name"] in ("tool_write", "tool_remove")


def _is_implementation_write(record: dict[str, Any]) -> bool:
    return record["kind"] == "fs" and record["name"] in ("remove", "replace", "write", "rename")


def _reserved_paths(run: _Run) -> list[tuple[int, str]]:
    """(trace seq, dossier path) of every successful template response."""
    out = []
    for seq, result in _template_responses(run):
        dossier = _dossier_in(result.text)
        if dossier and not result.error:
            out.append((seq, dossier))
    return out


def project_call_template_used(run: _Run, ops: list[dict[str, Any]]) -> Iterator[str]:
    """A project Call selection for the cwd is used by every later start, its Call instruction
    the project's template with the GET/Finish protocol appended (reference §7, H18a, H132)."""
    path = run.managed("project-templates.json")
    marker_file = run.managed("templates", "call_project.cmpl")
    if not marker_file.exists():
        return
    selected = run.has_ui and any(
        op["kind"] == "command" and op["text"].startswith("/sh project-template") for op in ops
    )
    if selected and not path.exists():
        yield f"the project Call selection was not persisted in {path}"
        return
    if not path.exists():
        return
    try:
        assigned = json.loads(path.read_text(encoding="utf-8")).get("projects", {})
    except json.JSONDecodeError:
        return
    if assigned.get(run.host.paths.project_dir, {}).get("call") != "call_project.cmpl":
        return
    marker = marker_file.read_text(encoding="utf-8").strip()
    for _seq, text in _call_instructions(run):
        if marker not in text:
            yield f"a Call instruction without the project's Call template ({marker})"
            return
        if not oracle.mentions(text, GET, FINISH):
            yield f"the project's Call instruction lacks the protocol (no {GET} and {FINISH}): {text[:80]!r}"
            return


def recovery_files_named_as_specified(run: RunReading, ops: list[dict[str, Any]]) -> Iterator[str]:
    """Each recovery file is named ``<filesystem-safe UTC timestamp with milliseconds>-<source
    session id reduced to letters, digits and hyphens>.md`` (reference §3.4, H46a). A dot-named
    file is an atomic write's temporary, not a recovery file. Explored sessions have UUIDv7 ids
    except where a seed names its first session (``blitz.generate``: one seed in seven, an id
    with an underscore and a dot), which is where the reduction shows."""
    root = run.managed("recovery")
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        if (
            path.is_file()
            and not path.name.startswith(".")
            and not oracle.RECOVERY_FILE_NAME.fullmatch(path.name)
        ):
            yield (
                f"recovery file {path.name!r} is not named <UTC timestamp with milliseconds>-<session id "
                "of letters, digits and hyphens>.md"
            )


#: Every invariant, in the order they are checked and reported, with the rules it checks.
BLITZ_INVARIANTS: tuple[tuple[Invariant, tuple[str, ...]], ...] = (
    (captured_prompts_kept_in_order, ("H27b", "H27c", "H41b", "H76a")),
    (prompts_captured_when_due, ("H22", "H27a")),
    (dossier_kept_until_receiver_turn, ("H44a",)),
    (one_active_request, ("H13", "H16", "H20")),
    (finish_only_with_returned_id, ("H29a", "H29b", "H70a")),
    (valid_finish_accepted, ("H29a", "H31b", "H34c", "H49c", "H51")),
    (finish_refused_onto_empty_dossier, ("H34a",)),
    (dossier_named_after_source_session, ("H112",)),
    (receiver_link_follows_chain_limit, ("H38", "H121", "H122")),
    (one_reminder_per_request, ("H49a",)),
    (reminder_only_while_request_waits, ("H51", "H70b")),
    (emergency_once_at_90_percent, ("H50", "H52c", "H53")),
    (automatic_initiation_budget, ("H54", "H55", "H58", "H60a", "H61")),
    (automatic_request_when_due, ("H15", "H56a", "H58", "H59", "H60a")),
    (explicit_start_makes_request, ("H11a", "H12")),
    (refused_start_said_aloud, ("H1a", "H13", "H106")),
    (dialog_only_for_a_command, ("H8",)),
    (switch_only_after_accepted_finish, ("H31a",)),
    (settings_file_valid, ("H88d", "H89", "H94b", "H95b", "H99b", "H100b")),
    (dossier_retained_when_deletion_off, ("H40b",)),
    (foreign_files_untouched, ("H72a",)),
    (project_call_template_used, ("H18a", "H127a", "H132")),
    (invalid_config_refuses_starts, ("H106",)),
    (in_memory_session_starts_nothing, ("H1a", "H1b")),
    (user_operation_blocked_while_protected, ("H25a", "H77a", "H77b", "H77c", "H77d", "H77e", "H138")),
    (recovery_files_named_as_specified, ("H46a",)),
)


#: An invariant whose violation on the run's first k operations stays one whatever follows (a
#: safety property of the prefix): :meth:`BlitzChecker.after_operation` checks it on the run so
#: far, and the run stops at the operation that broke it.
PREFIX = "prefix"
#: An invariant (or the part of one) that needs the run's end: an eventuality ("delivered later"),
#: or a file's final state; checked by :meth:`BlitzChecker.finish` only.
END = "end"

#: When each invariant of :data:`BLITZ_INVARIANTS` can be judged, and why. A ``prefix`` one may
#: have a part that needs the end (it reads ``_Run.over``): that part waits for ``finish``.
#: Every reading of the trace they share is prefix-stable: a request's epoch counts the boundaries
#: before a position, :func:`~pi_continuity_harness.features.blitz_oracle.classify` reads the
#: transcript in order, and the entries, operations and file operations of a prefix are those of
#: the whole run up to there.
CHECKED_WHEN: dict[str, tuple[str, str]] = {
    "captured_prompts_kept_in_order": (
        END,
        "a captured prompt may still be delivered or written to recovery later, and recovery files change",
    ),
    "prompts_captured_when_due": (
        PREFIX,
        "a due prompt whose operation ended with another disposition stays uncaptured",
    ),
    "dossier_kept_until_receiver_turn": (PREFIX, "a removal before the receiver's turn settled stays one"),
    "one_active_request": (PREFIX, "Call instructions and Finish IDs per request only accumulate"),
    "finish_only_with_returned_id": (
        PREFIX,
        "an accepted Finish is judged by the GETs and cancels before it",
    ),
    "valid_finish_accepted": (PREFIX, "a rejected valid Finish is judged by what came before it"),
    "finish_refused_onto_empty_dossier": (
        PREFIX,
        "an accepted Finish is judged by the dossier's state before it",
    ),
    "dossier_named_after_source_session": (
        PREFIX,
        "a template response and its session's header are written once",
    ),
    "receiver_link_follows_chain_limit": (
        PREFIX,
        "a session file's header (its parent link) is written once and never changes",
    ),
    "one_reminder_per_request": (PREFIX, "reminders per request only accumulate"),
    "reminder_only_while_request_waits": (
        PREFIX,
        "a reminder is judged by what its epoch held before it: the request known, the emergency sent",
    ),
    "emergency_once_at_90_percent": (
        PREFIX,
        "an emergency too early, a second one, or none before the request ended stay so; "
        "one still owed when the run ends: end",
    ),
    "automatic_initiation_budget": (PREFIX, "automatic requests per session only accumulate"),
    "automatic_request_when_due": (
        PREFIX,
        "a due request missed before the next model turn stays missed; one still owed when the run ends: end",
    ),
    "explicit_start_makes_request": (
        PREFIX,
        "a start whose Call did not come before the next operation stays unanswered; one still owed "
        "when the run ends: end",
    ),
    "refused_start_said_aloud": (
        PREFIX,
        "a start left without a Call and without a notification before the next operation stays so; "
        "the last start's: end",
    ),
    "dialog_only_for_a_command": (PREFIX, "a dialog opened outside a command stays so"),
    "switch_only_after_accepted_finish": (PREFIX, "a switch with no accepted Finish before it stays so"),
    "settings_file_valid": (END, "it judges the saved config.json as the run leaves it"),
    "dossier_retained_when_deletion_off": (END, "it judges which dossiers exist when the run is over"),
    "foreign_files_untouched": (
        PREFIX,
        "the implementation's removal or overwrite of a foreign file stays one; its final text: end",
    ),
    "project_call_template_used": (END, "it reads the selection and template files as the run leaves them"),
    "recovery_files_named_as_specified": (
        PREFIX,
        "a recovery file is named when it is written, and never renamed",
    ),
    "invalid_config_refuses_starts": (
        PREFIX,
        "a Call sent or config.json rewritten under an invalid config stays so",
    ),
    "in_memory_session_starts_nothing": (PREFIX, "a Call sent or a dossier reserved stays so"),
    "user_operation_blocked_while_protected": (
        PREFIX,
        "a user's new session, resume, fork or compaction that went through, or a navigation "
        "that was blocked, is judged by the window at its own session_before_switch, "
        "session_before_fork or session_before_compact",
    ),
}


def _ops_from_trace(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every operation (held ``during`` ones too) with its outcome: begins and ends nest."""
    scan = _Operations([])
    scan.feed(None, records)
    return scan.ops


class _Operations(_Scanner):
    """:func:`_ops_from_trace` record by record (an operation's dict gets its outcome at its end),
    each planted foreign file's operation given the text it plants (``planted``, in order)."""

    def __init__(self, planted: list[tuple[str, str]]) -> None:
        self.planted = planted
        self.ops: list[dict[str, Any]] = []
        self.open_ops: list[dict[str, Any]] = []
        self.edits = 0

    def feed(self, run: _Run | None, records: list[dict[str, Any]]) -> None:
        ops, open_ops = self.ops, self.open_ops
        for record in records:
            if record["kind"] != "op":
                continue
            if record.get("phase") == "end":
                for index in range(len(open_ops) - 1, -1, -1):
                    if open_ops[index]["kind"] == record["name"]:
                        op = open_ops.pop(index)
                        op["disposition"] = record.get("disposition")
                        op["ok"] = record.get("ok")
                        break
                continue
            op = {
                "kind": record["name"],
                "seq": int(record["seq"]),
                "text": str(record.get("text") or ""),
                "path": str(record.get("path") or ""),
                "disposition": None,
                "ok": None,
            }
            if op["kind"] == "edit_file" and "/handoff_" in op["path"]:
                if self.edits < len(self.planted):
                    op["content"] = self.planted[self.edits][1]
                self.edits += 1
            ops.append(op)
            open_ops.append(op)


def _planted(scenario: Scenario) -> list[tuple[str, str]]:
    """Foreign files the scenario plants (held ``during`` edits): (project path, text), in the
    order the replies carrying them are used."""
    out = []
    for reply in scenario.model.agent:
        for op in reply.during:
            if isinstance(op, EditFileOp) and "/handoff_" in op.edit_file.path:
                out.append((op.edit_file.path, op.edit_file.text or ""))
    return out


def _settings(scenario: Scenario) -> dict[str, Any]:
    """The handoff settings the scenario writes first (``config.json``), else the defaults ({})."""
    for op in scenario.operations:
        edit = op.edit_file if isinstance(op, EditFileOp) else None
        if edit is not None and edit.path == f"{MANAGED}/config.json" and isinstance(edit.json_value, dict):
            return dict(edit.json_value)
    return {}


def invariant_specs() -> tuple[InvariantSpec, ...]:
    """Every invariant, in the order they are checked, then the load check."""
    return (
        *(
            InvariantSpec(function.__name__, " ".join((function.__doc__ or "").split()), rules)
            for function, rules in BLITZ_INVARIANTS
        ),
        InvariantSpec(LOAD_FAILURE, "The implementation loads: Pi starts with it.", ()),
        InvariantSpec(
            WITHIN_BUDGET,
            "The run ends within its budget of host operations and virtual time (a runaway never ends).",
            (),
        ),
    )


class BlitzChecker:
    """The blitz handoff invariants on one simulation: the ``prefix`` ones (:data:`CHECKED_WHEN`)
    after every operation on the run so far, with the operation where they broke, the rest (and
    the parts of the ``prefix`` ones that need the end) once the run is over.

    Before (issue 16), every invariant ran once in :meth:`finish`: a failing seed was found only
    at its end, the run was not stopped at the operation that broke the rule, and minimisation
    worked from the whole run. An operation that added no trace record changed nothing the
    invariants read (files change through recorded operations), so it is not checked again.
    What the checks read that only grows (the trace, the session files, the entries and
    messages found in them) is read once per run (:class:`_Memo`), so a check costs about what
    the operation added, not the run so far.
    """

    def __init__(self, simulation: Simulation) -> None:
        scenario = simulation.result.scenario
        self.simulation = simulation
        self.settings = _settings(scenario)
        self.planted = _planted(scenario)
        self.violations: list[Violation] = []
        self.harness_errors: list[str] = []
        #: Calls of :meth:`after_operation` so far less one: the operations run (0: after the start).
        self._operation = -1
        #: How many trace records the last check read.
        self._checked_records = -1
        #: Invariants already violated (or failed): not reported again.
        self._reported: set[str] = set()
        self._memo = _Memo()
        self._metrics: dict[str, Any] = {}

    @property
    def ok(self) -> bool:
        return not self.violations and not self.harness_errors

    @property
    def invariants(self) -> frozenset[str]:
        return frozenset(spec.name for spec in invariant_specs())

    def before_operation(self, op: Operation) -> None:
        """Nothing to do: the invariants read the trace."""

    def after_operation(self) -> None:
        """Check the ``prefix`` invariants on the run so far; a violation carries the number of
        operations run (:attr:`CaseResult.operations_run` where the explorer stops)."""
        self._operation += 1
        count = len(self.simulation.host.trace.records)
        if count == self._checked_records:
            return
        self._checked_records = count
        self._check(over=False, operation=self._operation)

    def finish(self) -> None:
        """Check what needs the run's end, and every invariant not violated yet on the whole run;
        count what the protection invariant judged (:meth:`metrics`)."""
        self._check(over=True, operation=None)
        try:
            self._metrics = {"protection": protection_counts(self._run(over=True))}
        except Exception as error:  # a checker bug must surface, not hide a run
            self.harness_errors.append(f"protection_counts: {type(error).__name__}: {error}")

    def _run(self, *, over: bool) -> _Run:
        return _Run(self.simulation, self.settings, over=over, memo=self._memo)

    def _check(self, *, over: bool, operation: int | None) -> None:
        run = self._run(over=over)
        planted = self.planted
        ops = run.fold("operations", lambda: _Operations(planted)).ops
        for invariant, _rules in BLITZ_INVARIANTS:
            name = invariant.__name__
            if name in self._reported or not (over or CHECKED_WHEN[name][0] == PREFIX):
                continue
            try:
                found = [Violation(name, problem, operation) for problem in invariant(run, ops)]
            except Exception as error:  # a checker bug must surface, not hide a run
                self.harness_errors.append(f"{name}: {type(error).__name__}: {error}")
                self._reported.add(name)
                continue
            if found:
                self.violations += found
                self._reported.add(name)

    def check_liveness(self, first_healed_operation: int) -> Violation | None:
        """This system's explorer has no liveness phase."""
        return None

    def liveness(self, first_healed_operation: int) -> str | None:
        return None

    def found(self) -> list[tuple[str, str]]:
        return [(v.invariant, str(v)) for v in self.violations]

    def errors(self) -> list[str]:
        return list(self.harness_errors)

    def metrics(self) -> dict[str, Any]:
        """What the protection invariant judged in the finished run (empty before :meth:`finish`)."""
        return dict(self._metrics)


def run_checker(simulation: Simulation) -> BlitzChecker:
    """The ``pi-blitz-handoff`` checker of ``simulation`` (also the system's run checker, the
    entry point of ``pi_continuity_harness.run_checkers``)."""
    return BlitzChecker(simulation)
