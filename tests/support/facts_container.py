"""One warm Lambda container of the facts function, as its own process (``python -m tests.support.facts_container``).

Waits until the ``go`` file exists (so every container writes at once), then supersedes one entity+key with each
value in turn, retrying a 503 that carries Retry-After as a client would; prints ``[[value, status], …]`` as JSON.
The database, key secret and credentials come from the environment, as in a deployed function.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

from local_runtime.events import LocalContext, http_event

ROOT = Path(__file__).resolve().parents[2]
ATTEMPTS = 10


def main(go: str, context_id: str, key: str, entity: str, attribute: str, *values: str) -> None:
    spec = importlib.util.spec_from_file_location('facts_app', ROOT / 'functions' / 'facts' / 'app.py')
    assert spec and spec.loader
    facts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(facts)
    while not Path(go).exists():
        time.sleep(0.01)
    outcomes = []
    for value in values:
        triple = {'entity': {'type': 'person', 'name': entity}, 'key': attribute, 'value': value}
        event = http_event('POST', f'/api/v1/{context_id}/facts', body={'infer': 'triples', 'triples': [triple]},
                           headers={'authorization': f'Bearer {key}'})  # fmt: skip
        for _ in range(ATTEMPTS):
            result = facts.lambda_handler(event, LocalContext())
            outcomes.append([value, result['statusCode']])
            if result['statusCode'] != 503 or 'Retry-After' not in (result.get('headers') or {}):
                break
    print(json.dumps(outcomes))


if __name__ == '__main__':
    main(*sys.argv[1:])
