"""The HTTP API's operations, as data: one ``Operation`` per route with its request model, query parameters, and
every status it can answer with the model of each body.

The handlers register their routes from these (``app.operation(routes.QUERY)``), and ``infra/openapi/generate.py``
builds the OpenAPI document from the same objects, so the published document cannot disagree with what is routed.
template.yaml wires each route to its function; a test checks that the template, the handlers and this list agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROBLEM_JSON = 'application/problem+json'
JSON = 'application/json'

ERRORS: Mapping[int, str] = {
    400: 'Malformed JSON, an invalid field, enum, limit or query parameter',
    401: 'Missing, unknown, expired or rotated key',
    403: 'Outside the caller’s grants (or acting on behalf of a principal the key may not act for)',
    404: 'No such resource (or not visible to the caller)',
    409: 'Conflict: it already exists, the session is closed, or an idempotency key is reused with another body',
    413: 'Body over the size limit',
    422: 'Invalid or reserved context id',
    429: 'Rate limited (see Retry-After)',
    501: 'Not supported yet',
    503: 'Database, extraction queue or model provider unavailable (see Retry-After)',
}


@dataclass(frozen=True)
class Answer:
    """One documented response: its description and body — the name of a model in ``api/responses.py`` (an array of
    them with ``array``), a raw JSON schema, or none. The models are named, not imported: building them costs a
    cold start ~40 ms CPU, and only the generator needs them (it fails on a name that is not a model). An
    ``Operation``'s request model is named the same way, after ``agent_memory.models``."""

    description: str
    body: str | None = None
    media: tuple[str, ...] = (JSON,)
    schema: Mapping[str, Any] | None = None
    array: bool = False


@dataclass(frozen=True)
class Operation:
    name: str
    function: str  # the folder under functions/ whose handler serves it
    method: str
    path: str  # as OpenAPI and template.yaml spell it: /api/v1/{context_id}/facts
    summary: str
    answers: Mapping[int, Answer]
    errors: frozenset[int] = field(default_factory=frozenset)
    request: str | Mapping[str, Any] | None = None  # the name of a model in ``agent_memory.models``, or (for /mcp) a raw JSON schema
    query: tuple[str, ...] = ()
    public: bool = False

    @property
    def rule(self) -> str:
        """The path as a Powertools route rule (``<context_id>``)."""
        return self.path.replace('{', '<').replace('}', '>')

    @property
    def statuses(self) -> frozenset[int]:
        return frozenset(self.answers) | self.errors


def _errors(*statuses: int) -> frozenset[int]:
    return frozenset(statuses)


# Every data-plane route: a bad context id (422), no valid key (401), X-On-Behalf-Of the key may not use (403), the
# rate limit (429), the database (503). GET routes read `lens` (400); body routes parse a body (400, 413).
DATA = _errors(401, 403, 422, 429, 503)
DATA_GET = DATA | {400}
DATA_BODY = DATA | {400, 413}
# Management routes: the management key (401), its rate limit (429), the database (503); a context in the path: 422
# bad id, 404 unknown.
MANAGEMENT = _errors(401, 429, 503)
IN_CONTEXT = MANAGEMENT | {404, 422}
NO_CONTENT = Answer('Done (no body)')


def _op(name: str, function: str, method: str, path: str, summary: str, answers: Mapping[int, Answer], errors: frozenset[int],
        request: str | Mapping[str, Any] | None = None, query: tuple[str, ...] = (),
        public: bool = False) -> Operation:  # fmt: skip
    return Operation(name, function, method, path, summary, answers, errors, request, query, public)


def _ok(body: str, description: str = 'Success', array: bool = False) -> Mapping[int, Answer]:
    return {200: Answer(description, body, array=array)}


CTX = '/api/v1/{context_id}'
TTL = ('ttlSeconds', 'ttl_seconds')
MGMT = '/api/v1/contexts'

# ---- health -------------------------------------------------------------------------------------------------
HEALTH = _op('health', 'health', 'GET', '/api/v1/health', 'Liveness and database reachability (no key needed)',
             {200: Answer('Up, database reachable', 'Health'),
              503: Answer('Database unreachable (see Retry-After)', 'Health')}, frozenset(), public=True)  # fmt: skip
OPENAPI = _op('openapi', 'health', 'GET', '/api/v1/openapi.json', 'This document (no key needed)',
              {200: Answer('The OpenAPI 3.1 document', schema={'type': 'object'})}, frozenset(), public=True)  # fmt: skip

# ---- writes ------------------------------------------------------------------------------------------------------
_FACTS_ANSWERS = {200: Answer('Stored (and extracted, for `triples`, `preview`, or `full` within `Prefer: wait`)', 'FactsResult'),
                  202: Answer('Stored and queued for extraction', 'FactsResult')}  # fmt: skip
FACTS = _op('post_facts', 'facts', 'POST', f'{CTX}/facts', 'Remember one message or explicit triples', _FACTS_ANSWERS,
            DATA_BODY | {404, 409}, 'FactsRequest')  # fmt: skip
FACTS_BATCH = _op('post_facts_batch', 'facts', 'POST', f'{CTX}/facts/batch', 'Remember a conversation, in order',
                  {200: Answer('Stored (and extracted within `Prefer: wait`)', 'FactsBatchResult'),
                   202: Answer('Stored and queued for extraction', 'FactsBatchResult')},
                  DATA_BODY | {404, 409}, 'FactsBatchRequest')  # fmt: skip
EXTRACTION = _op('get_extraction', 'facts', 'GET', f'{CTX}/extractions/{{turn_id}}', 'Where the extraction of one turn stands',
                 _ok('ExtractionStatus'), DATA_GET | {404})  # fmt: skip
SESSION_CREATE = _op('create_session', 'sessions', 'POST', f'{CTX}/sessions', 'Open a session',
                     {201: Answer('Created', 'SessionCreated')}, DATA_BODY | {409}, 'SessionCreate')  # fmt: skip
SESSION_TURNS = _op('list_turns', 'sessions', 'GET', f'{CTX}/sessions/{{session_id}}/turns', "A session's turns, in order",
                    _ok('TurnPage'), DATA_GET | {404}, query=('cursor', 'limit', 'offset'))  # fmt: skip
SESSION_CLOSE = _op('close_session', 'sessions', 'DELETE', f'{CTX}/sessions/{{session_id}}', 'Close a session (its turns stay)',
                    {204: NO_CONTENT}, DATA | {404})  # fmt: skip

# ---- retrieval ---------------------------------------------------------------------------------------------------
QUERY = _op('query', 'retrieval', 'POST', f'{CTX}/query', 'Ranked recall over facts and passages', _ok('QueryResult'),
            DATA_BODY | {404}, 'QueryRequest')  # fmt: skip
CONTEXT = _op('context', 'retrieval', 'POST', f'{CTX}/context', 'A markdown context block for a system prompt', _ok('ContextBlock'),
              DATA_BODY, 'ContextRequest')  # fmt: skip
SESSION_CONTEXT = _op('context_for_session', 'retrieval', 'POST', f'{CTX}/sessions/{{session_id}}/context',
                      "A context block with the session's recent turns", _ok('SessionContextBlock'), DATA_BODY | {404},
                      'SessionContextRequest')  # fmt: skip
REFLECT = _op('reflect', 'retrieval', 'POST', f'{CTX}/reflect', 'Synthesis over memory (fresh retrieval, never the cache)',
              _ok('Reflection'), DATA_BODY, 'ReflectRequest')  # fmt: skip
FORGET = _op('forget', 'retrieval', 'POST', f'{CTX}/forget', 'Semantic forget: close, purge, or list (dryRun)', _ok('ForgetResult'),
             DATA_BODY, 'ForgetRequest')  # fmt: skip
CHAT = _op('chat', 'chat', 'POST', f'{CTX}/chat', 'The managed chat loop: response cache, retrieval, synthesis, turns stored',
           {200: Answer('The reply with its citations (as server-sent events with `stream: true` or `Accept: text/event-stream`)',
                        'ChatReply', (JSON, 'text/event-stream'))},
           DATA_BODY | {404, 409}, 'ChatRequest')  # fmt: skip

# ---- views -------------------------------------------------------------------------------------------------------------
STATE = _op('state', 'views', 'GET', f'{CTX}/state', 'Current memory by category', _ok('State'), DATA_GET, query=('limit',))
PROFILE = _op('profile', 'views', 'GET', f'{CTX}/profile', 'A prompt-ready profile of the caller', _ok('Profile'), DATA_GET)
UNCERTAINTIES = _op('uncertainty', 'views', 'GET', f'{CTX}/uncertainty', 'Uncertainty flags', _ok('UncertaintyPage'), DATA_GET,
                    query=('cursor', 'limit', 'resolved'))  # fmt: skip
RESOLVE = _op('resolve_uncertainty', 'views', 'POST', f'{CTX}/uncertainty/{{uncertainty_id}}/resolve', 'Settle an uncertainty flag',
              _ok('UncertaintyResolved'), DATA_BODY | {404}, 'ResolveUncertainty')  # fmt: skip
ME = _op('me', 'views', 'GET', f'{CTX}/me', 'Who the key speaks for, and with which grants', _ok('Me'), DATA_GET)
WHOAMI = _op('whoami', 'views', 'GET', '/api/v1/me', 'Who the key speaks for, in the context the key belongs to',
             _ok('Me'), _errors(401, 403, 429, 503))  # fmt: skip
INSPECT = _op('inspect', 'views', 'GET', f'{CTX}/inspect', 'The object a typed ref names', _ok('Inspection'), DATA_GET | {404, 501},
              query=('asOf', 'atInstant', 'ref', 'validFrom', 'validUntil'))  # fmt: skip

# ---- entities ------------------------------------------------------------------------------------------------------------
_ENTITY = f'{CTX}/entities/{{entity_type}}/{{name}}'
ENTITIES = _op('list_entities', 'entities', 'GET', f'{CTX}/entities', 'Entities, optionally of one type', _ok('EntityPage'), DATA_GET,
               query=('cursor', 'limit', 'type'))  # fmt: skip
ENTITY = _op('get_entity', 'entities', 'GET', _ENTITY, 'An entity with its current attributes and relations', _ok('EntityView'),
             DATA_GET | {404})  # fmt: skip
HISTORY = _op('history', 'entities', 'GET', f'{_ENTITY}/history/{{key}}', 'Every value one attribute has had',
              _ok('AttributeHistory'), DATA_GET | {404})  # fmt: skip
ENTITY_DELETE = _op('delete_entity', 'entities', 'DELETE', _ENTITY, 'Close an entity and its live facts (history stays)',
                    {204: NO_CONTENT}, DATA | {404})  # fmt: skip

# ---- traces ---------------------------------------------------------------------------------------------------------------
TRACES = _op('list_traces', 'traces', 'GET', f'{CTX}/traces', 'Recent retrieval traces, newest first', _ok('TracePage'), DATA_GET,
             query=('cursor', 'limit'))  # fmt: skip
TRACE_STATS = _op('trace_stats', 'traces', 'GET', f'{CTX}/traces/stats', 'Aggregates over a time window', _ok('TraceStats'),
                  DATA_GET, query=('windowHours',))  # fmt: skip
TRACE = _op('get_trace', 'traces', 'GET', f'{CTX}/traces/{{trace_id}}', 'One trace with its one-hop neighbourhood', _ok('Trace'),
            DATA_GET | {404})  # fmt: skip

# ---- lifecycle and self-service keys ---------------------------------------------------------------------------------------
SWEEP = _op('run_sweep', 'lifecycle', 'POST', f'{CTX}/lifecycle/{{sweep}}', 'Run one lifecycle sweep now (grant:manage over *)',
            _ok('SweepResult'), DATA | {404})  # fmt: skip
OWN_KEYS = _op('list_own_keys', 'keys', 'GET', f'{CTX}/keys', "The calling principal's keys", _ok('OwnKeys'), DATA_GET)
OWN_KEY_MINT = _op('mint_own_key', 'keys', 'POST', f'{CTX}/keys', 'Mint a key for the calling principal',
                   {201: Answer('Created (the secret is shown once)', 'KeyView')}, DATA_BODY | {409}, 'SelfKeyCreate',
                   query=TTL)  # fmt: skip
OWN_KEY_ROTATE = _op('rotate_own_key', 'keys', 'POST', f'{CTX}/keys/{{name}}/rotate', 'Rotate one of the calling principal’s keys',
                     _ok('KeyView', 'Rotated (the new secret is shown once)'), DATA | {400, 404},
                     query=TTL)  # fmt: skip
OWN_KEY_DELETE = _op('delete_own_key', 'keys', 'DELETE', f'{CTX}/keys/{{name}}', 'Revoke one of the calling principal’s keys',
                     {204: NO_CONTENT}, DATA | {400, 404})  # fmt: skip

# ---- management: contexts, principals, their keys -------------------------------------------------------------------------
_PRINCIPAL = f'{MGMT}/{{context_id}}/principals/{{principal_id}}'
CONTEXTS = _op('list_contexts', 'contexts', 'GET', MGMT, 'Every context', _ok('ContextSummary', array=True), MANAGEMENT)
CONTEXT_CREATE = _op('create_context', 'contexts', 'POST', f'{MGMT}/{{context_id}}', 'Create a context',
                     {201: Answer('Created', 'ContextView')}, MANAGEMENT | {400, 409, 413, 422}, 'ContextCreate')  # fmt: skip
CONTEXT_GET = _op('get_context', 'contexts', 'GET', f'{MGMT}/{{context_id}}', 'A context with its effective config',
                  _ok('ContextView'), IN_CONTEXT)  # fmt: skip
CONTEXT_PATCH = _op('patch_context', 'contexts', 'PATCH', f'{MGMT}/{{context_id}}', "Deep-merge into a context's config",
                    _ok('ContextView'), IN_CONTEXT | {400, 413}, 'ContextPatch')  # fmt: skip
CONTEXT_DELETE = _op('delete_context', 'contexts', 'DELETE', f'{MGMT}/{{context_id}}', 'Delete a context and all its data',
                     {204: NO_CONTENT}, IN_CONTEXT)  # fmt: skip
PRINCIPAL_CREATE = _op('create_principal', 'contexts', 'POST', f'{MGMT}/{{context_id}}/principals', 'Create a principal',
                       {201: Answer('Created', 'PrincipalView'), 200: Answer('Already there with this id and body', 'PrincipalView')},
                       IN_CONTEXT | {400, 409, 413}, 'PrincipalCreate')  # fmt: skip
PRINCIPALS = _op('list_principals', 'contexts', 'GET', f'{MGMT}/{{context_id}}/principals', "A context's principals",
                 _ok('PrincipalView', array=True), IN_CONTEXT)  # fmt: skip
PRINCIPAL_GET = _op('get_principal', 'contexts', 'GET', _PRINCIPAL, 'One principal', _ok('PrincipalView'), IN_CONTEXT)
PRINCIPAL_PATCH = _op('patch_principal', 'contexts', 'PATCH', _PRINCIPAL, 'Change a principal', _ok('PrincipalView'),
                      IN_CONTEXT | {400, 403, 409, 413}, 'PrincipalPatch')  # fmt: skip
PRINCIPAL_DELETE = _op('delete_principal', 'contexts', 'DELETE', _PRINCIPAL, 'Delete a principal and its keys', {204: NO_CONTENT},
                       IN_CONTEXT | {403})  # fmt: skip
KEYS = _op('list_keys', 'contexts', 'GET', f'{_PRINCIPAL}/keys', "A principal's keys", _ok('KeyView', array=True), IN_CONTEXT)
KEY_MINT = _op('mint_key', 'contexts', 'POST', f'{_PRINCIPAL}/keys/{{name}}', 'Mint a key for a principal',
               {201: Answer('Created (the secret is shown once)', 'KeyView')}, IN_CONTEXT | {400, 403, 409, 413}, 'KeyCreate',
               query=TTL)  # fmt: skip
KEY_ROTATE = _op('rotate_key', 'contexts', 'POST', f'{_PRINCIPAL}/keys/{{name}}/rotate', "Rotate a principal's key",
                 _ok('KeyView', 'Rotated (the new secret is shown once)'), IN_CONTEXT | {400}, query=TTL)  # fmt: skip
KEY_DELETE = _op('delete_key', 'contexts', 'DELETE', f'{_PRINCIPAL}/keys/{{name}}', "Revoke a principal's key", {204: NO_CONTENT},
                 IN_CONTEXT | {400})  # fmt: skip

# ---- management: export and restore (docs/backup-format.md) ----------------------------------------------------------------
NDJSON = 'application/x-ndjson'
_IMPORT = f'{MGMT}/{{context_id}}/import'
_EXPORT_HEADER = {
    'type': 'object',
    'description': "The export's first line (its header): the import checks it, then takes the records that follow.",
    'required': ['format', 'version', 'context', 'exportedAt', 'counts', 'embedding'],
    'properties': {'format': {'const': 'agent-memory-export'}, 'version': {'type': 'integer'}, 'context': {'type': 'string'},
                   'exportedAt': {'type': 'string'}, 'counts': {'type': 'object', 'additionalProperties': {'type': 'integer'}},
                   'embedding': {'type': 'object'}, 'traces': {'type': 'boolean'}},
}  # fmt: skip
EXPORT = _op('export_context', 'contexts', 'GET', f'{MGMT}/{{context_id}}/export', 'Export a context: a page of NDJSON',
             {200: Answer('A page of the export (the first starts with the header); header X-Next-Cursor names the next page',
                          media=(NDJSON,), schema={'type': 'string'})},
             IN_CONTEXT | {400}, query=('cursor', 'traces'))  # fmt: skip
IMPORT_START = _op('start_import', 'contexts', 'POST', _IMPORT, 'Start restoring an export into this empty context',
                   {201: Answer('Import opened: send the records, then commit', 'ImportStarted')}, IN_CONTEXT | {400, 409, 413},
                   _EXPORT_HEADER)  # fmt: skip
IMPORT_RECORDS = _op('stage_import', 'contexts', 'POST', f'{_IMPORT}/{{import_id}}',
                     "Send a batch of the export's lines (checked and staged)", _ok('ImportStaged'), IN_CONTEXT | {400, 409, 413},
                     'ImportRecords')  # fmt: skip
IMPORT_COMMIT = _op('commit_import', 'contexts', 'POST', f'{_IMPORT}/{{import_id}}/commit',
                    'Check the import is whole, then write it (call again until done)', _ok('ImportCommitted'),
                    IN_CONTEXT | {400, 409})  # fmt: skip
IMPORT_DISCARD = _op('discard_import', 'contexts', 'DELETE', f'{_IMPORT}/{{import_id}}', 'Discard an import before its commit',
                     {204: NO_CONTENT}, IN_CONTEXT | {409})  # fmt: skip

# ---- MCP (JSON-RPC through the MCP SDK: bodies described as schemas, not models) ---------------------------------------------
_MCP_MESSAGE = {
    'type': 'object',
    'description': 'A JSON-RPC 2.0 request or notification of the MCP Streamable HTTP transport (stateless, JSON answers): '
    'tools/list, tools/call (remember, recall, context, reflect, forget, inspect), initialize, ping.',
    'required': ['jsonrpc', 'method'],
    'properties': {'jsonrpc': {'const': '2.0'}, 'id': {'type': ['string', 'integer']}, 'method': {'type': 'string'},
                   'params': {'type': 'object'}},
}  # fmt: skip
_ANY: Mapping[str, Any] = {}
MCP = _op('post', 'mcp', 'POST', '/mcp', 'The MCP endpoint (Streamable HTTP, stateless, JSON answers)', {
    200: Answer('A JSON-RPC response: a result, or an error (-32602 invalid params, -32601 unknown method/tool)', schema=_ANY),
    202: Answer('Notification accepted (no body)'),
    400: Answer('Not JSON, not a JSON-RPC message, or (2026-07-28 protocol) a malformed envelope', media=(JSON, 'text/plain'),
                schema=_ANY),
    404: Answer('2026-07-28 protocol (Mcp-Protocol-Version header): an unknown method or tool, as a JSON-RPC error', schema=_ANY),
    406: Answer('The Accept header excludes application/json', schema=_ANY),
    413: Answer(ERRORS[413], media=('text/plain',), schema=_ANY),
}, _errors(401, 429, 503), _MCP_MESSAGE)  # fmt: skip
_MCP_OTHER = {405: Answer('Use POST', schema=_ANY)}
MCP_GET = _op('get', 'mcp', 'GET', '/mcp', 'Stateless server: no server-initiated stream', _MCP_OTHER, _errors(401, 429, 503))
MCP_DELETE = _op('delete', 'mcp', 'DELETE', '/mcp', 'Stateless server: no session to end', _MCP_OTHER, _errors(401, 429, 503))

OPERATIONS: tuple[Operation, ...] = tuple(value for value in dict(globals()).values() if isinstance(value, Operation))
