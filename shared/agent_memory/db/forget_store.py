"""Statements for POST /forget (CONTRACT §10): expire matched facts, or erase them with their history.

Every statement is bounded by the caller's ``memory:forget`` region (``INSIDE_FORGET``) and its read region: rows
outside either are neither changed nor counted, and their history survives a purge.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from agent_memory.db.memory_store import CLAUSE_IN_FORGET, CURRENT, CURRENT_EDGE, INSIDE_FORGET, VISIBLE, MemoryStore, visibility_params
from agent_memory.db.records import entity_rid, rid
from agent_memory.db.withholding import WITHHELD, withholding

# Destroyed: rows inside the forget region that the caller can also read (a forget grant never reveals or reaches
# rows outside the read grant).
_DESTROYABLE = f'{INSIDE_FORGET} AND {VISIBLE}'

# What still refers to the entities after a purge (rows outside the region, which it kept).
_REMAINING_REFS = """array::distinct(array::flatten([
    (SELECT VALUE entity_ref FROM attribute WHERE entity_ref IN $refs),
    (SELECT VALUE in_ref FROM relates_to WHERE in_ref IN $refs),
    (SELECT VALUE out_ref FROM relates_to WHERE out_ref IN $refs),
    (SELECT VALUE actor_ref FROM action WHERE actor_ref IN $refs),
    (SELECT VALUE object_ref FROM action WHERE object_ref IN $refs)
]))"""


class ForgetStore:
    def __init__(self, store: MemoryStore, region: Sequence[str], read: Sequence[str]) -> None:
        self.store = store
        self.region = visibility_params(region, 'fg') | visibility_params(read)

    def expire(self, attribute_ids: Sequence[str], entity_refs: Sequence[str], now: dt.datetime) -> int:
        """Soft: the attributes, and every current attribute, relation and action of the entities, end now."""
        sql = f"""
            BEGIN TRANSACTION;
            LET $a = (UPDATE (SELECT VALUE id FROM $ids WHERE {CURRENT} AND {_DESTROYABLE}) SET valid_until = $now RETURN VALUE id);
            LET $b = (UPDATE (SELECT VALUE id FROM attribute WHERE entity_ref IN $refs AND {CURRENT} AND {_DESTROYABLE})
                SET valid_until = $now RETURN VALUE id);
            LET $c = (UPDATE (SELECT VALUE id FROM relates_to WHERE (in_ref IN $refs OR out_ref IN $refs) AND {CURRENT_EDGE}
                AND {_DESTROYABLE}) SET valid_until = $now RETURN VALUE id);
            LET $d = (UPDATE (SELECT VALUE id FROM action WHERE (actor_ref IN $refs OR object_ref IN $refs) AND {CURRENT_EDGE}
                AND {_DESTROYABLE}) SET valid_until = $now RETURN VALUE id);
            {withholding('array::flatten([$a, $b, $c, $d])', '$refs')}
            RETURN array::len(array::union($a, $b)) + array::len($c) + array::len($d);
            COMMIT TRANSACTION;
        """
        ids = [rid('attribute', i) for i in attribute_ids]
        result = self.store.q(sql, ids=ids, refs=list(entity_refs), now=now, withheld=WITHHELD, **self.region)
        return int(result[-2] or 0)

    def purge(self, addresses: Sequence[str], entity_refs: Sequence[str]) -> int:
        """Erase: every row at the attributes' addresses (their history too), and the entities with all their facts.

        An entity itself is erased only when it lies wholly inside the region and nothing outside the region still
        refers to it; otherwise it survives and only loses the scope clauses that lay inside the region.
        """
        entities = [entity_rid(*ref.split('/', 1)) for ref in entity_refs]
        sql = f"""
            BEGIN TRANSACTION;
            LET $a = (DELETE attribute WHERE (address IN $addresses OR entity_ref IN $refs) AND {_DESTROYABLE} RETURN BEFORE);
            LET $c = (DELETE relates_to WHERE (in_ref IN $refs OR out_ref IN $refs) AND {_DESTROYABLE} RETURN BEFORE);
            LET $d = (DELETE action WHERE (actor_ref IN $refs OR object_ref IN $refs) AND {_DESTROYABLE} RETURN BEFORE);
            LET $kept = {_REMAINING_REFS};
            LET $e = (DELETE $entities WHERE {INSIDE_FORGET} AND array::join(record::id(id), '/') NOT IN $kept RETURN BEFORE);
            UPDATE $entities SET scope_sets = scope_sets.filter(|$cl| !{CLAUSE_IN_FORGET}) WHERE !{INSIDE_FORGET} RETURN NONE;
            {withholding('array::flatten([$a.id, $c.id, $d.id, $e.id])', '$refs')}
            RETURN array::len($a) + array::len($c) + array::len($d) + array::len($e);
            COMMIT TRANSACTION;
        """
        result = self.store.q(sql, addresses=list(addresses), refs=list(entity_refs), entities=entities, withheld=WITHHELD, **self.region)
        return int(result[-2] or 0)
