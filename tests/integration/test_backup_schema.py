"""The export format covers the schema: every table of a context is exported or deliberately left out, and every
stored field of an exported table is in the file (a migration that adds one fails here until the format says how it
travels; docs/backup-format.md)."""

from __future__ import annotations

from agent_memory.backup_format import KINDS
from agent_memory.db.memory_store import MemoryStore

NOT_EXPORTED = {
    'attribute_lean': 'a mirror, written by the database events when its attribute is written',
    'entity_lean': 'a mirror of entity',
    'memory_chunk_lean': 'a mirror of memory_chunk',
    'idempotency': 'replays of recent writes (24 h); a restored context starts without them',
    'vector_gone': 'deleted vectors, for process-local copies (a day)',
    'vector_index': 'HNSW rebuild bookkeeping',
    'lifecycle_clock': 'in the context record (decayEpoch, scheduledDay)',
    'schema_migration': 'the schema version: the target applies its own migrations',
    'import_job': 'an import in progress',
    'import_row': "an import's staged rows",
}


def test_every_table_is_exported_or_deliberately_left_out(store: MemoryStore) -> None:
    tables = set(store.q('INFO FOR DB;')[0]['tables'])
    assert tables == {k.name for k in KINDS} | set(NOT_EXPORTED)


def test_every_stored_field_of_an_exported_table_is_in_the_format(store: MemoryStore) -> None:
    for kind in KINDS:
        fields = store.q(f'INFO FOR TABLE {kind.name};')[0]['fields']
        # computed on every write (VALUE) or on read (COMPUTED): the database makes them again from the rest
        stored = {name for name, definition in fields.items() if '.' not in name and ' VALUE ' not in definition
                  and ' COMPUTED ' not in definition}  # fmt: skip
        assert stored == {f.name for f in kind.fields}, kind.name
