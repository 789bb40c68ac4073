"""A write answers nothing the writer could not read (issue 30, finding 3; CONTRACT §3).

A principal may write where it cannot read (a write-only agent, a key narrowed for reading). The answer to its write —
an uncertainty's reason, a correction's old value, the answer to resolving a doubt, a replay of an earlier answer under
the same ``Idempotency-Key`` — never quotes a value from a row it may not read.
"""

from __future__ import annotations

import json

from agent_memory.composition import Services
from tests.support.handlers import Api, mgmt
from tests.support.principals import make_principal

ACCOUNT = {'type': 'organisation', 'name': 'Northwind'}
SECRET = 'sk-live-7731'
WRITE_ONLY = {'memory:write': ['team/a/*']}


def _triple(api: Api, value: str, confidence: float = 1.0, **headers: str) -> tuple[int, dict]:
    body = {'infer': 'triples', 'scopes': ['team/a/vault'], 'triples': [{'entity': ACCOUNT, 'key': 'api_key', 'value': value,
                                                                         'confidence': confidence}]}  # fmt: skip
    code, answer, _ = api.call('facts', 'POST', '/facts', body, headers=headers)
    return code, answer


def test_a_write_only_principal_learns_no_current_value(services: Services, api: Api) -> None:
    # Given a secret value written by the admin, and a principal that may only write there
    assert _triple(api, SECRET)[0] == 200
    writer = make_principal(services, api.context_id, 'probe', WRITE_ONLY, 'team/a')
    # When it writes a low-confidence value at the same address
    code, unsure = _triple(writer, 'probe', confidence=0.3)
    # Then the uncertainty is recorded, but its reason does not quote the secret (nor does the stored row)
    assert code == 200 and unsure['extraction']['uncertainties'], unsure
    assert SECRET not in json.dumps(unsure), unsure
    reasons = services.store(api.context_id).rows('SELECT VALUE reason FROM uncertainty;')
    assert reasons and all(SECRET not in r for r in reasons), reasons
    # When it writes a confident value, superseding the secret
    code, confident = _triple(writer, 'probe-2')
    # Then the correction is reported without the old value
    assert code == 200 and confident['extraction']['corrections'], confident
    assert confident['extraction']['corrections'][0]['oldValue'] is None
    assert SECRET not in json.dumps(confident)
    # And the admin, who may read it, still sees the old value in its own correction
    code, admin_fix = _triple(api, 'probe-3')
    assert code == 200 and admin_fix['extraction']['corrections'][0]['oldValue'] == 'probe-2', admin_fix


def test_resolving_a_doubt_tells_nothing_the_resolver_cannot_read(services: Services, api: Api) -> None:
    # Given an open doubt about the secret (a low-confidence competitor) in team/a/vault
    assert _triple(api, SECRET)[0] == 200
    assert _triple(api, 'guess', confidence=0.3)[0] == 200
    doubt = api.call('views', 'GET', '/uncertainty')[1]['uncertainties'][0]
    # When a write-only principal tries to settle it
    writer = make_principal(services, api.context_id, 'probe', WRITE_ONLY, 'team/a')
    code, body, _ = writer.call('views', 'POST', f'/uncertainty/{doubt["id"].partition(":")[2]}/resolve', {'acceptedValue': 'mine'})
    # Then it is the same 404 as a doubt that does not exist, and nothing changed
    assert code == 404 and SECRET not in json.dumps(body), body
    assert api.call('views', 'GET', '/uncertainty')[1]['uncertainties'][0]['resolved'] is False
    # And a principal that may read and write there settles it and sees the values it may read
    code, settled, _ = api.call('views', 'POST', f'/uncertainty/{doubt["id"].partition(":")[2]}/resolve', {'acceptedValue': 'final'})
    assert code == 200 and {c['oldValue'] for c in settled['corrections']} == {SECRET, 'guess'}, settled


def test_a_replayed_idempotency_key_needs_the_grants_of_the_write(services: Services, api: Api) -> None:
    # Given pa's confident write over the secret, answered with the old value, under an Idempotency-Key
    make_principal(services, api.context_id, 'pa', {'memory:read': ['team/a/*'], 'memory:write': ['team/a/*']}, 'team/a')
    full = Api(api.context_id, mgmt('POST', f'/{api.context_id}/principals/pa/keys/full', {})[1]['secret'])
    assert _triple(api, SECRET)[0] == 200
    code, first = _triple(full, 'rotated', **{'Idempotency-Key': 'rotate-1'})
    assert code == 200 and first['extraction']['corrections'][0]['oldValue'] == SECRET, first
    # When keys of pa that may not read there, or not write there, send the same request with the same key
    for n, grants in enumerate(({'memory:write': ['team/a/*']}, {'memory:read': ['team/a/*']}, {})):
        code, minted = mgmt('POST', f'/{api.context_id}/principals/pa/keys/narrow{n}', {'grants': grants})
        assert code == 201, minted
        code, replayed = _triple(Api(api.context_id, minted['secret']), 'rotated', **{'Idempotency-Key': 'rotate-1'})
        # Then the stored answer is not replayed to them (403, as the write itself would be without the grants)
        assert code == 403 and SECRET not in json.dumps(replayed), replayed
    # And the full key still gets its replay
    code, again = _triple(full, 'rotated', **{'Idempotency-Key': 'rotate-1'})
    assert (code, again) == (200, first)
