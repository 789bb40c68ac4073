"""``DELETE /entities/{type}/{name}`` (CONTRACT §10): a soft delete of the entity's facts inside the caller's
``memory:forget`` region, answered as absent when the caller cannot read the entity or it lies outside the region."""

from __future__ import annotations

from agent_memory.clock import utcnow
from agent_memory.domain.auth import Caller
from agent_memory.domain.entity_keys import entity_key
from agent_memory.domain.ports import EntityFactCloser, MemoryReads
from agent_memory.domain.reads import as_key
from agent_memory.errors import NotFound


def delete_entity(reads: MemoryReads, writes: EntityFactCloser, caller: Caller, entity_type: str, name: str) -> int:
    key, region, read = as_key(entity_key(entity_type, name)), caller.patterns('memory:forget'), caller.patterns('memory:read')
    if reads.get_entity(key, read) is None or reads.get_entity(key, region) is None:  # unreadable answers as absent
        raise NotFound('entity not found')
    return writes.close_entity_facts(list(key), utcnow(), region, read)
