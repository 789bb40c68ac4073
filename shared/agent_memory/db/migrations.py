"""Versioned schema migrations (``infra/migrations/{control,context}/NNNN_name.surql``).

Each database records what it has applied in ``schema_migration``; applying is idempotent
and safe when two cold starts race (the record id is the version, so the loser conflicts).
"""

from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from agent_memory.config import get_settings
from agent_memory.db.connection import Database
from agent_memory.errors import Conflict

# HNSW indexes need the vector length; it is the deployment's (recorded and checked at start-up).
DIMENSION_PLACEHOLDER = '__EMBEDDING_DIMENSION__'
_FILE = re.compile(r'(\d{4})_([a-z0-9_]+)\.surql')
_BOOKKEEPING = """
DEFINE TABLE IF NOT EXISTS schema_migration SCHEMAFULL;
DEFINE FIELD IF NOT EXISTS name ON schema_migration TYPE string;
DEFINE FIELD IF NOT EXISTS applied_at ON schema_migration TYPE datetime;
SELECT VALUE record::id(id) FROM schema_migration;
"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


@lru_cache(maxsize=2)
def load_migrations(kind: str) -> tuple[Migration, ...]:
    folder = resources.files('agent_memory').joinpath('migrations', kind)
    found = []
    for entry in folder.iterdir():
        match = _FILE.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding='utf-8')))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        # the runner records versions, so a second file with a taken number would be skipped silently
        clashes = sorted(f'{m.version:04d}_{m.name}' for m in found if versions.count(m.version) > 1)
        raise RuntimeError(f'{kind} migrations share a version number: {", ".join(clashes)}')
    return tuple(sorted(found, key=lambda m: m.version))


# Keyed by the connection object itself (weakly): an id() could be reused by a later connection after this one is gone.
_migrated: weakref.WeakKeyDictionary[Database, set[str]] = weakref.WeakKeyDictionary()
_migrated_lock = threading.Lock()


def ensure_migrated(db: Database, database: str, kind: str) -> list[int]:
    """Apply every pending migration of ``kind`` to ``database``; return the versions applied now."""
    if database in _migrated.get(db, ()):
        return []
    with _migrated_lock:
        applied_now = _apply(db, database, kind)
        _migrated.setdefault(db, set()).add(database)
    return applied_now


def forget_migrated(db: Database, database: str) -> None:
    _migrated.get(db, set()).discard(database)


def _apply(db: Database, database: str, kind: str) -> list[int]:
    done = set(db.query(database, _BOOKKEEPING)[-1] or [])
    applied = []
    for migration in load_migrations(kind):
        if migration.version in done:
            continue
        body = migration.sql.replace(DIMENSION_PLACEHOLDER, str(get_settings().embedding_dimension))
        sql = (
            'BEGIN TRANSACTION;\n'
            f'{body}\n'
            'CREATE type::record("schema_migration", $version) SET name = $name, applied_at = time::now();\n'
            'COMMIT TRANSACTION;'
        )
        try:
            db.query(database, sql, {'version': migration.version, 'name': migration.name})
        except Conflict:
            continue  # another process applied it first
        applied.append(migration.version)
    return applied
