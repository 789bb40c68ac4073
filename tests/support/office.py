"""An office where one fact (Dana's salary) lives in HR and another (the wifi password) in the shared scope, and
three principals who read and write different parts of it."""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.composition import Services
from tests.support.handlers import Api
from tests.support.principals import make_principal

HR = 'team/a/hr'


@dataclass
class Office:
    analyst: Api  # reads HR, writes only shared
    hr_lead: Api  # reads and writes HR and shared
    reader: Api  # shared only


def make_office(services: Services, context_id: str, api: Api) -> Office:
    shared = {'memory:read': ['shared/*'], 'memory:write': ['shared/*']}
    analyst = make_principal(services, context_id, 'analyst', {'memory:read': ['shared/*', HR], 'memory:write': ['shared/*']}, 'shared')
    both = ['shared/*', 'team/a/*']
    hr_lead = make_principal(services, context_id, 'hr-lead', {'memory:read': both, 'memory:write': both}, 'shared')
    reader = make_principal(services, context_id, 'reader', shared, 'shared')
    triples = [{'entity': {'type': 'person', 'name': 'Dana'}, 'key': 'salary', 'value': '120k'}]
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': HR, 'triples': triples})[0] == 200
    office_fact = [{'entity': {'type': 'organisation', 'name': 'Office'}, 'key': 'wifi_password', 'value': 'swordfish'}]
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': 'shared', 'triples': office_fact})[0] == 200
    return Office(analyst, hr_lead, reader)


def passages(api: Api, query: str) -> list[str]:
    """The texts of the first 20 hits for ``query`` as this caller sees them."""
    return [h['text'] for h in api.call('retrieval', 'POST', '/query', {'query': query, 'k': 20})[1]['hits']]
