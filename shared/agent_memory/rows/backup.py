"""What the backup store hands the domain: export rows, staging and link-check outcomes (docs/backup-format.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Key = str | tuple[str, str]


@dataclass(frozen=True)
class ExportRow:
    key: Key
    line: str  # the record, as one line of JSON


@dataclass(frozen=True)
class Staged:
    """What staging a batch did: how many records are new, and the first one whose key an earlier line already had."""

    new: int
    duplicate: tuple[int, int] | None = None  # (line, the earlier line)


@dataclass(frozen=True)
class Dangling:
    """A staged record whose required link names no row of the file."""

    line: int
    kind: str
    field: str
    key: Any


@dataclass(frozen=True)
class LinkCheck:
    dangling: Dangling | None
    done: bool  # every staged row has been checked
