"""POST /forget (CONTRACT §10): forget the facts and entities closest in meaning to a query.

Only rows the caller can read and that lie wholly inside its ``memory:forget`` region are candidates (an
entity: one that touches the region), only current ones, at most ``limit`` of them, and only those at
cosine ≥ ``forget_similarity`` (agent_memory/tuning.py) to the query — a vague query forgets nothing rather than the nearest thing.
Soft (default): matched attributes end now; a matched entity has its current facts, relations and
actions inside the region ended (history stays readable). ``purge``: the matched attributes' address
history inside the region, and matched entities with every fact about them inside the region, are erased;
an entity something outside the region still refers to survives. ``dryRun``: the same match, nothing written.
Passages (memory chunks) are not matched: they have no validity to end.
"""

from __future__ import annotations

from typing import Any

from agent_memory.clock import utcnow
from agent_memory.domain.auth import Caller
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.retrieval import to_hit
from agent_memory.embeddings import Embedder
from agent_memory.errors import Forbidden
from agent_memory.models import ForgetRequest
from agent_memory.rows.reads import ReadFilter
from agent_memory.rows.refs import key_of, ref_address
from agent_memory.tuning import knobs


def forget(store: MemoryWrites, embedder: Embedder, caller: Caller, request: ForgetRequest) -> dict[str, Any]:
    region = caller.patterns('memory:forget')
    if not region:
        raise Forbidden('forgetting needs a memory:forget grant')
    now = utcnow()
    vector = embedder.embed([request.query])[0]
    where = ReadFilter(caller.patterns('memory:read'), now, forget_region=region)
    lookup = store.search()
    matched = []
    for table in ('attribute', 'entity'):
        for row in lookup.vector(table, vector, request.limit, where):
            similarity = 1.0 - float(row.distance or 0.0)
            if similarity >= knobs().forget_similarity:
                matched.append((similarity, to_hit(row)))
    matched.sort(key=lambda m: -m[0])
    matched = matched[: request.limit]
    attributes = [hit for _, hit in matched if hit.table == 'attribute']
    entity_refs = [hit.entity_refs[0] for _, hit in matched if hit.table == 'entity']
    listed = [{'id': hit.id, 'text': hit.text, 'similarity': round(s, 4)} for s, hit in matched]
    if request.dry_run:
        return {'deleted': 0, 'dryRun': True, 'matched': listed}
    forgetting = store.forgetting(region, caller.patterns('memory:read'))
    if request.purge:
        addresses = [ref_address(hit.entity_refs[0], hit.resource['key']) for hit in attributes]
        deleted = forgetting.purge(addresses, entity_refs)
    else:
        deleted = forgetting.expire([key_of(hit.id) for hit in attributes], entity_refs, now)
    return {'deleted': deleted, 'purged': request.purge, 'matched': listed}
