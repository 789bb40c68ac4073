"""What reading a table into the process costs, statement by statement, on a context ``bench/fresh_process.py --keep``
kept (the facts' analysed texts and the people's vectors, by ids and by scans in key order; issue 14).

Run on the store that kept it, e.g.
``AGENT_MEMORY_DB_URL=surrealkv:///tmp/kv PYTHONPATH=shared:infra:. .venv/bin/python bench/table_reads.py --reuse ctx.json``
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import retrieval  # noqa: I001  # first: bench_env sets paths and environment before the service imports

from agent_memory.db.records import rid

TEXTS = "SELECT VALUE [record::id(id), search::analyze('memory_text', search_text)]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--reuse', required=True, help='the JSON file bench/fresh_process.py --keep wrote')
    args = parser.parse_args()
    with open(args.reuse) as kept:
        store = retrieval.get_services().store(json.load(kept)['context'])

    def timed(label: str, sql: str, **params: Any) -> Any:
        started = time.perf_counter()
        result = store.q(sql, **params)[-1]
        ms = (time.perf_counter() - started) * 1000
        print(f'{label:<62} {ms:>8.1f} ms  ({len(result) if isinstance(result, list) else result} rows)')
        return result

    facts = timed("facts' keys", 'SELECT VALUE record::id(id) FROM attribute_lean')
    timed('the count a look made before it listed them', 'RETURN count((SELECT id FROM attribute_lean LIMIT 100001))')
    for n in (500, 5000, 20000):
        timed(
            f"facts' analysed texts, {n:,} by ids", f'{TEXTS} FROM $ids', ids=[rid('attribute_lean', k) for k in facts[10_000 : 10_000 + n]]
        )
        timed(
            f"facts' ids only, {n:,} by ids",
            'SELECT VALUE record::id(id) FROM $ids',
            ids=[rid('attribute_lean', k) for k in facts[70_000 : 70_000 + n]],
        )
    after = rid('attribute_lean', facts[len(facts) // 2])
    timed(
        f"facts' analysed texts, scan of 20,000 from key {len(facts) // 2:,}",
        f'{TEXTS} FROM attribute_lean WHERE id > $after LIMIT 20000',
        after=after,
    )
    people = timed("people's keys", 'SELECT VALUE record::id(id) FROM entity_lean')
    for at in (1000, len(people) * 3 // 4, len(people) - 1000):
        ids = [rid('entity', k) for k in people[at + 1 : at + 501]]
        timed(f"people's vectors, 500 by ids from key {at:,}", 'SELECT id, embedding FROM $ids WHERE embedding IS NOT NONE', ids=ids)
        timed(
            f"people's vectors, scan of 500 from key {at:,}",
            'SELECT id, embedding FROM entity WHERE id > $after LIMIT 500',
            after=rid('entity', people[at]),
        )


if __name__ == '__main__':
    main()
