"""The engine-message table (db/connection.py ``ENGINE_MESSAGES``): the real engine says every row's text.

Each case makes the embedded engine fail the way production would and checks two things: the engine's message
still carries the row's marker (a reworded message fails here, after an engine upgrade, instead of turning a
retryable conflict into a 500), and the connection turns it into the row's error.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from surrealdb import AsyncSurreal, Surreal

from agent_memory.composition import Services
from agent_memory.db.connection import ALREADY_APPLIED, CONFLICT_MARKER, ENGINE_MESSAGES, QueryFailed, engine_error
from agent_memory.errors import AgentMemoryError, AlreadyApplied, Conflict, WriteConflict

# marker → (statements that make the engine say it, the error it must become); the conflict needs two sessions
STATEMENT_CASES: dict[str, tuple[str, type[AgentMemoryError]]] = {
    ALREADY_APPLIED: (f"BEGIN; THROW '{ALREADY_APPLIED}'; COMMIT;", AlreadyApplied),
    CONFLICT_MARKER: (f"BEGIN; THROW '{CONFLICT_MARKER}: the row changed'; COMMIT;", WriteConflict),
    'already contains': ('DEFINE INDEX one_k ON slot FIELDS k UNIQUE; CREATE slot:1 SET k = 1; CREATE slot:2 SET k = 1;', WriteConflict),
    'already exists': ('CREATE taken:1; CREATE taken:1;', Conflict),
}
TRANSACTION_CONFLICT = 'Transaction conflict'


def engine_message(sql: str) -> str:
    """The message of the first failed statement, straight from a fresh embedded engine."""
    with Surreal('mem://') as db:
        raw = db.query_raw(f'USE NS probe DB probe; {sql}', {})
    failed = [s for s in raw['result'] if s['status'] == 'ERR' and (s.get('details') or {}).get('kind') != 'NotExecuted']
    return str(failed[0]['result'])


def concurrent_commit_message(attempts: int = 5) -> str:
    """Two transactions read then write one row at once on one engine; the later COMMIT's message.

    The embedded engine serialises a blocking connection's queries, so this uses the async one, which runs them
    concurrently as a hosted server does. The overlap comes from SLEEP inside the transactions; under heavy load it
    can be missed, hence a few attempts (the test asserts on the message, never on time)."""

    async def race() -> list[str]:
        db = AsyncSurreal('mem://')
        await db.query_raw('USE NS probe DB probe; CREATE counter:1 SET n = 0;', {})
        sql = (
            'USE NS probe DB probe; BEGIN; LET $n = (SELECT VALUE n FROM ONLY counter:1); SLEEP 300ms; '
            'UPDATE counter:1 SET n = $n + 1; COMMIT;'
        )
        results = await asyncio.gather(*(db.query_raw(sql, {}) for _ in range(2)))
        return [str(s['result']) for raw in results for s in raw['result'] if s['status'] == 'ERR']

    for _ in range(attempts):
        if failures := [m for m in asyncio.run(race()) if 'COMMIT' in m]:
            return failures[0]
    raise AssertionError(f'no two of {attempts} concurrent attempts overlapped')


def test_every_row_of_the_table_has_a_case_here() -> None:
    # Given the table, When its markers are listed, Then each one is made by the engine below
    assert {marker for marker, _ in ENGINE_MESSAGES} == {*STATEMENT_CASES, TRANSACTION_CONFLICT}


@pytest.mark.parametrize('marker', list(STATEMENT_CASES))
def test_the_engine_still_says_it_and_the_connection_maps_it(services: Services, marker: str) -> None:
    # Given the statements that make the engine fail this way
    sql, error = STATEMENT_CASES[marker]
    # When the engine runs them, directly and through the service's connection
    message = engine_message(sql)
    # Then its message carries the marker, and the connection raises the row's error
    assert marker in message, message
    database = f'engine_errors_{uuid.uuid4().hex[:8]}'
    with pytest.raises(error) as raised:
        services.db.query(database, sql)
    assert type(raised.value) is error


def test_a_real_transaction_conflict_is_a_retryable_write_conflict() -> None:
    # Given two transactions that read and write the same row at the same time
    # When the engine commits both
    message = concurrent_commit_message()
    # Then the loser's message names a transaction conflict, and it becomes a WriteConflict (503, retried), not a 500
    assert TRANSACTION_CONFLICT in message, message
    assert isinstance(engine_error(message), WriteConflict)


@pytest.mark.parametrize('unknown', ['Parse error: Unexpected token', 'Found 2f for field importance'])
def test_any_other_message_is_a_query_failure(unknown: str) -> None:
    # Given a message no row names, When it is classified, Then it is a bug (a 500), not a client error or a retry
    assert type(engine_error(unknown)) is QueryFailed
