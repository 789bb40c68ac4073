"""Statements for POST /forget (CONTRACT §10): expire matched facts, or erase them with their history."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from agent_memory.db.memory_store import CURRENT, CURRENT_EDGE, MemoryStore
from agent_memory.db.records import entity_rid, rid


class ForgetStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def expire(self, attribute_ids: Sequence[str], entity_refs: Sequence[str], now: dt.datetime) -> int:
        """Soft: the attributes, and every current attribute, relation and action of the entities, end now."""
        sql = f"""
            BEGIN TRANSACTION;
            LET $a = (UPDATE (SELECT VALUE id FROM $ids WHERE {CURRENT}) SET valid_until = $now RETURN VALUE id);
            LET $b = (UPDATE (SELECT VALUE id FROM attribute WHERE entity_ref IN $refs AND {CURRENT})
                SET valid_until = $now RETURN VALUE id);
            LET $c = (UPDATE (SELECT VALUE id FROM relates_to WHERE (in_ref IN $refs OR out_ref IN $refs) AND {CURRENT_EDGE})
                SET valid_until = $now RETURN VALUE id);
            LET $d = (UPDATE (SELECT VALUE id FROM action WHERE (actor_ref IN $refs OR object_ref IN $refs) AND {CURRENT_EDGE})
                SET valid_until = $now RETURN VALUE id);
            RETURN array::len(array::union($a, $b)) + array::len($c) + array::len($d);
            COMMIT TRANSACTION;
        """
        result = self.store.q(sql, ids=[rid('attribute', i) for i in attribute_ids], refs=list(entity_refs), now=now)
        return int(result[-2] or 0)

    def purge(self, addresses: Sequence[str], entity_refs: Sequence[str]) -> int:
        """Erase: every row at the attributes' addresses (their history too), and the entities with all their facts."""
        entities = [entity_rid(*ref.split('/', 1)) for ref in entity_refs]
        sql = """
            BEGIN TRANSACTION;
            LET $a = (DELETE attribute WHERE address IN $addresses OR entity_ref IN $refs RETURN BEFORE);
            LET $c = (DELETE relates_to WHERE in_ref IN $refs OR out_ref IN $refs RETURN BEFORE);
            LET $d = (DELETE action WHERE actor_ref IN $refs OR object_ref IN $refs RETURN BEFORE);
            LET $e = (DELETE $entities RETURN BEFORE);
            RETURN array::len($a) + array::len($c) + array::len($d) + array::len($e);
            COMMIT TRANSACTION;
        """
        result = self.store.q(sql, addresses=list(addresses), refs=list(entity_refs), entities=entities)
        return int(result[-2] or 0)
