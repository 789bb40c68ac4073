"""The SurrealDB SDK patches (agent_memory/db/sdk.py) against the installed SDK: an upgrade that removes what a patch
replaces fails here with the names, instead of failing later inside a request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_memory.db import sdk

ROOT = Path(__file__).resolve().parents[2]


def _normalised(version: str) -> str:
    return re.sub(r'[-.]?beta[-.]?', 'b', version)  # the SDK reports 3.0.0-beta.10 for the release pinned as 3.0.0b10


def test_the_installed_sdk_has_everything_the_patches_replace() -> None:
    assert sdk.missing_patch_targets() == [], (
        f'surrealdb {sdk.installed_version()} changed what agent_memory/db/sdk.py patches: {sdk.missing_patch_targets()}'
    )


def test_the_patches_were_written_for_the_pinned_and_installed_sdk() -> None:
    pinned = re.search(r'^surrealdb==(\S+)$', (ROOT / 'shared' / 'requirements.txt').read_text(), re.M)
    assert pinned and pinned.group(1) == sdk.PATCHED_FOR
    assert _normalised(sdk.installed_version()) == sdk.PATCHED_FOR, (
        f'surrealdb {sdk.installed_version()} is installed; the patches in agent_memory/db/sdk.py were written for '
        f'{sdk.PATCHED_FOR}: check each of sdk.PATCH_TARGETS against the new release, then update PATCHED_FOR'
    )


def test_a_missing_target_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an SDK whose encoder module lost the function a patch replaces (a probe)
    monkeypatch.delattr(sdk.request_encoding, 'encode')
    # Then the check names it
    assert sdk.missing_patch_targets() == [f'{sdk.request_encoding.__name__}.encode']


def test_the_patches_are_in_place() -> None:
    assert sdk.utils_mixin.decode is sdk.decode
    assert sdk.request_encoding.encode is sdk.encode
    assert sdk.cbor_encoder.default_encoders[sdk.Vector] is sdk._encode_vector
