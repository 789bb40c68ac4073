"""The write plan's emitters: one transaction, in a safe order, every value bound as a parameter."""

from __future__ import annotations

import datetime as dt

from agent_memory.composition import IMPORTANCE
from agent_memory.db.records import Tx
from agent_memory.db.write_emitters import emit_all
from agent_memory.write_ops import (
    CreateAction,
    CreateAttribute,
    CreateChunk,
    CreateTurn,
    FactFields,
    GuardAddress,
    MarkTurnExtracted,
    Operation,
    Provenance,
    Reinforce,
    SupersedeAttribute,
    UpsertEntity,
)

NOW = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
HOSTILE = "x'; DELETE attribute; --"
FIELDS = FactFields('knowledge', 0.8, Provenance('upsert', None, None, 'p'), None, NOW, NOW, NOW, [['/']])


def _turn(turn_id: str) -> CreateTurn:
    return CreateTurn(turn_id, 'p/s', 'user', HOSTILE, 'p', [['/']], ['*'], NOW, NOW, None, None, None, None)


def _emitted(operations: list[Operation]) -> Tx:
    tx = Tx()
    emit_all(tx, tx.p(NOW), operations, IMPORTANCE)
    return tx


def _first(tx: Tx, fragment: str) -> int:
    return next(i for i, statement in enumerate(tx.statements) if fragment in statement)


def test_the_transaction_checks_the_turn_then_the_guards_before_any_row_and_reinforces_last() -> None:
    # Given a plan whose operations were added in an unhelpful order
    tx = _emitted(
        [
            Reinforce([('attribute', 'a1')]),
            CreateAttribute('a1', ('person', 'alice'), 'city', 'Oslo', 0.9, FIELDS),
            UpsertEntity(('person', 'alice'), 'Alice', 'knowledge', 0.8, [['/']], None, NOW, NOW),
            GuardAddress(('person', 'alice'), 'city', ()),
            MarkTurnExtracted('t1', '{}', 'stage0'),
        ]
    )
    # Then a second attempt at the turn aborts first, the guard precedes every write it protects, reinforcement comes last
    assert 'SELECT VALUE extraction_status' in tx.statements[0] and 'THROW' in tx.statements[0]
    guard = _first(tx, 'array::sort')
    assert guard < _first(tx, 'UPSERT') < _first(tx, 'CREATE')
    assert _first(tx, 'importance_base = math::min') == len(tx.statements) - 1


def _created(tx: Tx) -> list[tuple[str, str]]:
    """(table, key) of every CREATE, in statement order."""
    records = [tx.params[s.split()[1].removeprefix('$')] for s in tx.statements if s.startswith('CREATE')]
    return [(r.table_name, str(r.id)) for r in records]


def test_turns_keep_their_plan_order_and_their_chunks_follow() -> None:
    # Given two turns planned in order with the first one's chunk between them
    chunk = CreateChunk('t1_0', 'p/s', 't1', 0, 'hi', [['/']], [], 'user', NOW, deferred=True)
    tx = _emitted([_turn('t1'), chunk, _turn('t2')])
    # Then the turns are created in that order, each numbered inside the transaction, and the chunk after them
    assert _created(tx) == [('turn', 't1'), ('turn', 't2'), ('memory_chunk', 't1_0')]
    assert sum('LET $seq' in s for s in tx.statements) == 2


def test_no_value_is_spliced_into_the_statement_text() -> None:
    # Given operations carrying a hostile string in every text field they have
    tx = _emitted(
        [
            _turn('t1'),
            CreateAttribute('a1', ('person', HOSTILE), HOSTILE, HOSTILE, 0.9, FIELDS),
            CreateAction('x1', ('person', HOSTILE), None, HOSTILE, HOSTILE, HOSTILE, None, FIELDS),
            GuardAddress(('person', HOSTILE), HOSTILE, (HOSTILE,)),
        ]
    )
    # Then it reaches the database only as a bound parameter
    assert not any('DELETE' in statement for statement in tx.statements)


def test_a_new_attribute_stores_its_initial_importance_as_the_decay_base_and_omits_unset_links() -> None:
    # Given a new attribute without links, When it is emitted, Then its content stores the initial importance as importance_base, has no
    # importance, and omits the unset link fields
    tx = _emitted([CreateAttribute('a1', ('person', 'alice'), 'city', 'Oslo', 0.9, FIELDS)])
    content = next(v for v in tx.params.values() if isinstance(v, dict))
    assert content['importance_base'] == 0.8 and 'importance' not in content
    assert not {'valid_until', 'supersedes', 'superseded_by'} & set(content)


def test_an_action_is_never_confirmed_and_a_superseded_attribute_is_closed_now() -> None:
    # Given an unconfirmed action and an attribute superseded by another, When they are emitted, Then the action has no confirmed_at and the
    # superseded attribute's valid_until is set to now
    unconfirmed = FactFields('context', 0.5, FIELDS.source, None, NOW, NOW, None, [['/']])
    tx = _emitted(
        [CreateAction('x1', ('person', 'alice'), None, 'ran', None, 'Alice ran', None, unconfirmed), SupersedeAttribute('a0', 'a1')]
    )
    action = next(v for v in tx.params.values() if isinstance(v, dict))
    assert 'confirmed_at' not in action and action['verb'] == 'ran'
    assert 'SET valid_until = $p0, superseded_by' in next(s for s in tx.statements if s.startswith('UPDATE'))
