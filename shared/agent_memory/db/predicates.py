"""The SurrealQL predicates and addresses every context-memory query shares (CONTRACT §3–§6).

Kept apart from the stores so the write emitters and each read store use one definition of "current", "visible"
and "inside the forget region".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_memory.rows.refs import address_key as address_key
from agent_memory.rows.refs import ref_address as ref_address

CURRENT = 'superseded_by IS NONE AND valid_from <= $now AND (valid_until IS NONE OR valid_until > $now)'
# What reconciliation compares against and re-checks at commit: rows not superseded and not ended.
# Unlike CURRENT it ignores valid_from, so a row written by a concurrent request whose clock ran a
# little ahead of ours still counts (otherwise the commit-time guard would miss it).
OPEN = 'superseded_by IS NONE AND (valid_until IS NONE OR valid_until > $now)'
CURRENT_EDGE = 'valid_from <= $now AND (valid_until IS NONE OR valid_until > $now)'
VISIBLE = '($vis_all OR scope_sets.any(|$c| $c.all(|$s| $s IN $vis_exact OR $vis_prefixes.any(|$pre| string::starts_with($s, $pre)))))'
# The caller's memory:forget region (params from ``visibility_params(patterns, 'fg')``). A clause lies inside it when
# every path of the clause is covered; a row lies inside it only when every clause does (a row also readable through a
# clause outside the region belongs partly to someone else, so delete, forget and purge leave it alone).
CLAUSE_IN_FORGET = '($fg_all OR $cl.all(|$p| $p IN $fg_exact OR $fg_prefixes.any(|$pre| string::starts_with($p, $pre))))'
INSIDE_FORGET = f'(array::len(scope_sets) > 0 AND scope_sets.all(|$cl| {CLAUSE_IN_FORGET}))'
TOUCHES_FORGET = f'scope_sets.any(|$cl| {CLAUSE_IN_FORGET})'
TENTATIVE = (
    '(source_turn != NONE AND array::len((SELECT VALUE id FROM uncertainty '
    'WHERE source_turn_key = <string> record::id($parent.source_turn) AND resolved = false LIMIT 1)) > 0) AS tentative'
)
FACT_TABLES = ('entity', 'attribute', 'relates_to', 'action')
TRACE_TABLES = ('decision_trace', 'retrieval_trace', 'response_trace')
ALL_TABLES = (
    'principal',
    'session',
    'turn',
    'memory_chunk',
    'entity',
    'attribute',
    'relates_to',
    'action',
    'instruction',
    'uncertainty',
    *TRACE_TABLES,
    'idempotency',
)


def entity_ref_key(entity_key: Sequence[str]) -> str:
    """The indexed string form of an entity id (migration 0004: record-valued fields are not indexable)."""
    return f'{entity_key[0]}/{entity_key[1]}'


def visibility_params(patterns: Sequence[str], prefix: str = 'vis') -> dict[str, Any]:
    """Bind grant patterns for ``VISIBLE`` (a reader's ``memory:read``) or, with prefix ``fg``, the forget predicates."""
    exact = [p[:-2] if p.endswith('/*') else p for p in patterns if p != '*']
    prefixes = [p[:-1] for p in patterns if p.endswith('/*')]
    return {f'{prefix}_all': '*' in patterns, f'{prefix}_exact': exact, f'{prefix}_prefixes': prefixes}


ENTITY = f'SELECT * OMIT embedding FROM $id WHERE {VISIBLE};'
INSTRUCTIONS = f'SELECT * FROM instruction WHERE active = true AND {VISIBLE} ORDER BY created_at ASC LIMIT $limit;'


# A caller's session ``$own`` (``<principal>/<id>``), a legacy one stored under the bare id ``$legacy``, then every
# other session with client id ``$client``, oldest first (domain/sessions.py picks the first inside the region).
SESSIONS_NAMED = (
    'array::concat((SELECT * FROM $own), (SELECT * FROM $legacy), '
    '(SELECT * FROM session WHERE client_id = $client AND id != $own ORDER BY created_at ASC LIMIT 64))'
)


def category_sql(table: str, category_param: str) -> str:
    """The newest current visible rows of ``table`` in one memory category (bound as ``category_param``), ``$limit`` of them."""
    extra = f', {TENTATIVE}' if table == 'attribute' else ''
    current = CURRENT if table == 'attribute' else CURRENT_EDGE
    where = f'memory_category = {category_param} AND {VISIBLE}'
    if table != 'entity':
        where += f' AND {current}'
    return f'SELECT *{extra} OMIT embedding FROM {table} WHERE {where} ORDER BY created_at DESC LIMIT $limit;'


def uncertainties_sql(by_resolved: bool, after: bool) -> str:
    """Visible uncertainties by id, optionally filtered by ``$resolved`` and paged after ``$after``."""
    where = [VISIBLE]
    if by_resolved:
        where.append('resolved = $resolved')
    if after:
        where.append('id > $after')
    return f'SELECT * FROM uncertainty WHERE {" AND ".join(where)} ORDER BY id ASC LIMIT $limit;'
