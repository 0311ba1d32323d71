"""Pi Session Continuity v0.2.0, reference implementation.

:func:`extension` is the extension factory (the ``reference`` implementation entry point).
It wires Pi's events to thin sequences of calls into the host-independent modules, each
doing one job (config, native settings, paths, frontmatter, body validation, atomic I/O,
retention, settings merge, messages, status, settings preview, synthesis, commit
correlation) without state, timers or host access. Process-local state lives in
:mod:`.state`, the handoff pipeline in :mod:`.lifecycle`, the ``/continuity`` command in
:mod:`.commands`.
"""

from __future__ import annotations

from pi_continuity_harness.reference.psc.atomic_io import (
    AtomicWriteRecord,
    atomic_write_text,
    ensure_directory,
    read_text_exact,
    remove_file,
)
from pi_continuity_harness.reference.psc.brief import (
    MissingRecoveryHeadingError,
    authority_violations,
    failure_brief_body,
    insert_event_freshness_rule,
    missing_headings,
    validate_brief_body,
)
from pi_continuity_harness.reference.psc.config import (
    ConfigError,
    ConfigLoad,
    ExtensionConfig,
    FieldProblem,
    extension_config_path,
    load_extension_config,
    project_settings_path,
    resolve_artifact_directory,
)
from pi_continuity_harness.reference.psc.constants import (
    ARCHIVE_RETENTION,
    ARTIFACT_KIND,
    AUTHORITY_BOUNDARY_RULE,
    CONTINUATION_SUFFIX,
    EVENT_FRESHNESS_RULE,
    MANDATORY_HEADINGS,
    MIN_SYNTHESIS_TRANSCRIPT_TOKENS,
    PRODUCT_NAME,
    STATUS_KEY,
)
from pi_continuity_harness.reference.psc.extension import extension
from pi_continuity_harness.reference.psc.frontmatter import (
    BriefParseError,
    ContinuityBriefFrontmatter,
    LegacyBriefError,
    ParsedBrief,
    build_frontmatter,
    frontmatter_json_schema,
    parse_brief,
    serialize_brief,
    with_status,
)
from pi_continuity_harness.reference.psc.handoff import (
    PreparedHandoff,
    brief_sha256,
    commit_mismatches,
    continuation_text,
    handoff_reason_for,
    resume_source_problems,
)
from pi_continuity_harness.reference.psc.native_settings import (
    NativeCompactionSettings,
    NativeSettingsError,
    PercentInputError,
    derive_native_tokens,
    effective_percents,
    format_approximately,
    percent_for_frontmatter,
    read_native_settings,
    validate_native_settings,
)
from pi_continuity_harness.reference.psc.paths import (
    ArtifactLayout,
    file_timestamp,
    iso_timestamp,
    safe_session_component,
)
from pi_continuity_harness.reference.psc.retention import archived_briefs, pending_briefs, prune_archive
from pi_continuity_harness.reference.psc.settings_merge import (
    SettingsMergeError,
    merge_project_compaction_settings,
)
from pi_continuity_harness.reference.psc.settings_preview import inherit_model_warning, settings_preview
from pi_continuity_harness.reference.psc.status import (
    StatusSnapshot,
    footer_status,
    footer_text,
    format_status_panel,
    status_word,
)
from pi_continuity_harness.reference.psc.synthesis import (
    OutputBudgetError,
    SynthesisFailure,
    SynthesisRequest,
    brief_from_synthesis,
    build_synthesis_request,
    resolve_synthesis_effort,
    synthesis_output_budget,
    transcript_token_budget,
)

__all__ = [
    "ARCHIVE_RETENTION",
    "ARTIFACT_KIND",
    "AUTHORITY_BOUNDARY_RULE",
    "CONTINUATION_SUFFIX",
    "EVENT_FRESHNESS_RULE",
    "MANDATORY_HEADINGS",
    "MIN_SYNTHESIS_TRANSCRIPT_TOKENS",
    "PRODUCT_NAME",
    "STATUS_KEY",
    "ArtifactLayout",
    "AtomicWriteRecord",
    "BriefParseError",
    "ConfigError",
    "ConfigLoad",
    "ContinuityBriefFrontmatter",
    "ExtensionConfig",
    "FieldProblem",
    "LegacyBriefError",
    "MissingRecoveryHeadingError",
    "NativeCompactionSettings",
    "NativeSettingsError",
    "OutputBudgetError",
    "ParsedBrief",
    "PercentInputError",
    "PreparedHandoff",
    "SettingsMergeError",
    "StatusSnapshot",
    "SynthesisFailure",
    "SynthesisRequest",
    "archived_briefs",
    "atomic_write_text",
    "authority_violations",
    "brief_from_synthesis",
    "brief_sha256",
    "build_frontmatter",
    "build_synthesis_request",
    "commit_mismatches",
    "continuation_text",
    "derive_native_tokens",
    "effective_percents",
    "ensure_directory",
    "extension",
    "extension_config_path",
    "failure_brief_body",
    "file_timestamp",
    "footer_status",
    "footer_text",
    "format_approximately",
    "format_status_panel",
    "frontmatter_json_schema",
    "handoff_reason_for",
    "inherit_model_warning",
    "insert_event_freshness_rule",
    "iso_timestamp",
    "load_extension_config",
    "merge_project_compaction_settings",
    "missing_headings",
    "parse_brief",
    "pending_briefs",
    "percent_for_frontmatter",
    "project_settings_path",
    "prune_archive",
    "read_native_settings",
    "read_text_exact",
    "remove_file",
    "resolve_artifact_directory",
    "resolve_synthesis_effort",
    "resume_source_problems",
    "safe_session_component",
    "serialize_brief",
    "settings_preview",
    "status_word",
    "synthesis_output_budget",
    "transcript_token_budget",
    "validate_brief_body",
    "validate_native_settings",
    "with_status",
]
