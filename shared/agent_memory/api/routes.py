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
    description: str = ''  # what it does, its rules and limits (the reference page shows it under the summary)
    parameters: Mapping[str, str] = field(default_factory=dict)  # descriptions of its own parameters, over ``PARAMETERS``

    @property
    def reads_lens(self) -> bool:
        """Every data-plane GET narrows the caller's read grant by ``?lens=`` (``api.http.data_plane``)."""
        return self.method == 'GET' and self.path.startswith(CTX)

    def parameter(self, name: str) -> str:
        """The description of one of its path or query parameters."""
        return self.parameters.get(name) or PARAMETERS[name]

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
        request: str | Mapping[str, Any] | None = None, query: tuple[str, ...] = (), public: bool = False, *,
        description: str, parameters: Mapping[str, str] | None = None) -> Operation:  # fmt: skip
    return Operation(name, function, method, path, summary, answers, errors, request, query, public, description, parameters or {})


def _ok(body: str, description: str = 'Success', array: bool = False) -> Mapping[int, Answer]:
    return {200: Answer(description, body, array=array)}


CTX = '/api/v1/{context_id}'
TTL = ('ttlSeconds', 'ttl_seconds')
MGMT = '/api/v1/contexts'

_TTL = "The key's lifetime in seconds (1–315360000, i.e. 10 years); also accepted in the body as `ttlSeconds`, but not both."
_PAGE_LIMIT = 'Page size, 1–500 (default 100).'
# Parameters several operations share, described once; an operation describes its own in ``parameters``.
PARAMETERS: Mapping[str, str] = {
    'context_id': 'The context (tenant): 1–64 characters of `A-Z a-z 0-9 _ -`; `contexts` and `health` are reserved. '
    'Anything else is 422; a key of another context is 401.',
    'session_id': 'The session id (the one given at creation, or the generated `sess_…` returned by the write that made it).',
    'entity_type': 'The entity type (`person`, `organisation`, `project`, …; synonyms fold as on writes).',
    'principal_id': 'The principal: its id as given at creation, or the generated `p_…`.',
    'cursor': 'The `page.nextCursor` of the previous page; absent: the first page.',
    'limit': _PAGE_LIMIT,
    'lens': 'Narrow what this read sees to these scope patterns (comma-separated, e.g. `org/acme/*,team/x`) within the '
    "caller's `memory:read` grant; outside the grant it sees nothing (never 403). A malformed pattern is 400.",
    'ttlSeconds': _TTL,
    'ttl_seconds': _TTL,
}
_ENTITY_NAME = {'name': 'The entity name, any casing and spacing (percent-encode `/` and spaces).'}
_KEY_NAME = {'name': 'The key name.'}

# ---- health -------------------------------------------------------------------------------------------------
HEALTH = _op('health', 'health', 'GET', '/api/v1/health', 'Liveness and database reachability (no key needed)',
             {200: Answer('Up, database reachable', 'Health'),
              503: Answer('Database unreachable (see Retry-After)', 'Health')}, frozenset(), public=True,
             description='Whether the service runs and reaches its database: 200 when both hold, 503 with `Retry-After` when the '
             'database cannot be reached. No key needed.')  # fmt: skip
OPENAPI = _op('openapi', 'health', 'GET', '/api/v1/openapi.json', 'This document (no key needed)',
              {200: Answer('The OpenAPI 3.1 document', schema={'type': 'object'})}, frozenset(), public=True,
              description='The OpenAPI 3.1 description of every route, generated from the code (`make openapi`). Locally, '
              '`make dev` also serves it as a page at `/docs`.')  # fmt: skip

# ---- writes ------------------------------------------------------------------------------------------------------
_FACTS_ANSWERS = {200: Answer('Stored (and extracted, for `triples`, `preview`, or `full` within `Prefer: wait`)', 'FactsResult'),
                  202: Answer('Stored and queued for extraction', 'FactsResult')}  # fmt: skip
FACTS = _op('post_facts', 'facts', 'POST', f'{CTX}/facts', 'Remember one message or explicit triples', _FACTS_ANSWERS,
            DATA_BODY | {404, 409}, 'FactsRequest',
            description='Stores a message as a turn of a session (created when none is named) and, by `infer`, extracts what it '
            'says: entities, attributes, relations, actions, instructions and uncertainties, reconciled against what memory '
            'holds (a new value supersedes the current one; nothing is overwritten blindly). `full` queues the extraction and '
            'answers 202 at once; `Prefer: wait=N` (N ≤ 25 seconds) waits for it and answers 200 when done. `triples` writes '
            'the facts given, synchronously and without an LLM; `preview` extracts and stores nothing; `none` stores the text '
            'only. The same `Idempotency-Key` header with the same body within 24 hours returns the stored answer (another '
            'body: 409). A body over 1 MiB or a text over 64 KiB is 413.')  # fmt: skip
FACTS_BATCH = _op('post_facts_batch', 'facts', 'POST', f'{CTX}/facts/batch', 'Remember a conversation, in order',
                  {200: Answer('Stored (and extracted within `Prefer: wait`)', 'FactsBatchResult'),
                   202: Answer('Stored and queued for extraction', 'FactsBatchResult')},
                  DATA_BODY | {404, 409}, 'FactsBatchRequest',
                  description='Stores up to 100 messages as turns of one session, in order, in one transaction, then queues '
                  'their extraction: one job for the whole conversation (each message read with the others as context) or '
                  'one per message. A message\'s `name` is its speaker: their first person binds to that person, not to the '
                  'caller. `Prefer: wait=N` and `Idempotency-Key` work as on `POST /facts`.')  # fmt: skip
EXTRACTION = _op('get_extraction', 'facts', 'GET', f'{CTX}/extractions/{{turn_id}}', 'Where the extraction of one turn stands',
                 _ok('ExtractionStatus'), DATA_GET | {404},
                 description='Poll a turn queued for extraction: `queued`, `running`, then `done` with what was extracted, or '
                 '`failed` once the queue\'s retries ran out. When the LLM stage fails the rules\' (stage 0) result is kept '
                 'and `llmError` says why. A turn the caller cannot read is 404.',
                 parameters={'turn_id': 'The turn: the `turnId` its write answered.'})  # fmt: skip
SESSION_CREATE = _op('create_session', 'sessions', 'POST', f'{CTX}/sessions', 'Open a session',
                     {201: Answer('Created', 'SessionCreated')}, DATA_BODY | {409}, 'SessionCreate',
                     description='Creates an empty session for later writes (`sessionId` on `/facts`, `/facts/batch`, `/chat`); '
                     'writes that name no session create their own, so this is optional. Its scopes must lie within the '
                     'caller\'s write grant (403); an id the caller can already see is 409.')  # fmt: skip
SESSION_TURNS = _op('list_turns', 'sessions', 'GET', f'{CTX}/sessions/{{session_id}}/turns', "A session's turns, in order",
                    _ok('TurnPage'), DATA_GET | {404}, query=('cursor', 'limit', 'offset'),
                    description='The session\'s turns the caller may read, oldest first, `limit` per page. A session the '
                    'caller cannot read is 404.',
                    parameters={'cursor': 'Same as `offset`: the `page.nextCursor` of the previous page.',
                                'offset': 'How many turns to skip, 0–1000000000 (default 0).'})  # fmt: skip
SESSION_CLOSE = _op('close_session', 'sessions', 'DELETE', f'{CTX}/sessions/{{session_id}}', 'Close a session (its turns stay)',
                    {204: NO_CONTENT}, DATA | {404},
                    description='Marks the session closed: its turns, passages and facts stay, but writes naming it are 409 '
                    'from then on. The session must lie in the caller\'s write region (else 404). Closing it again changes '
                    'nothing.')  # fmt: skip

# ---- retrieval ---------------------------------------------------------------------------------------------------
QUERY = _op('query', 'retrieval', 'POST', f'{CTX}/query', 'Ranked recall over facts and passages', _ok('QueryResult'),
            DATA_BODY | {404}, 'QueryRequest',
            description='Hybrid retrieval over the facts and passages the caller may read: vector (HNSW, cosine), full-text '
            '(BM25) and graph lists (1–2 hops from the entities the query names) fused by reciprocal rank over a pool of at '
            'most 256 candidates and weighted by importance; `hits` are the best `k`. Current facts only, unless `asOf` or a '
            'validity window asks for other times. Never uses the response cache. Writes a retrieval trace and reinforces '
            'every fact it returns (importance ×1.1, at most 2.0).')  # fmt: skip
CONTEXT = _op('context', 'retrieval', 'POST', f'{CTX}/context', 'A markdown context block for a system prompt', _ok('ContextBlock'),
              DATA_BODY, 'ContextRequest',
              description='Hybrid retrieval as `/query` (current facts), rendered as markdown for a system prompt: the '
              'caller\'s active instructions, its own profile facts, then the relevant facts and passages with their dates '
              'and speakers. No LLM and never the response cache. Writes a retrieval trace and reinforces the facts it '
              'returns.')  # fmt: skip
SESSION_CONTEXT = _op('context_for_session', 'retrieval', 'POST', f'{CTX}/sessions/{{session_id}}/context',
                      "A context block with the session's recent turns", _ok('SessionContextBlock'), DATA_BODY | {404},
                      'SessionContextRequest',
                      description='A context block for continuing a session: retrieval for `query` (default: the session\'s '
                      'recent user turns), leaving out what the recent turns already hold, followed by those turns with their '
                      'speakers. Replies `/chat` generated are never evidence and are left out. A session the caller cannot '
                      'read is 404.')  # fmt: skip
REFLECT = _op('reflect', 'retrieval', 'POST', f'{CTX}/reflect', 'Synthesis over memory (fresh retrieval, never the cache)',
              _ok('Reflection'), DATA_BODY, 'ReflectRequest',
              description='Retrieves fresh evidence for `query` and synthesises an answer over it with the configured LLM (or, '
              'without one, the extractive composer), citing it with `[S1]`-style markers. `persist: true` also stores it as a '
              '`reflection` attribute of the entity it is most about (never a self entity), no more visible than its '
              'sources: 403 and nothing stored when no scope in the caller\'s write region can hold it. Writes a retrieval '
              'and a response trace.')  # fmt: skip
FORGET = _op('forget', 'retrieval', 'POST', f'{CTX}/forget', 'Semantic forget: close, purge, or list (dryRun)', _ok('ForgetResult'),
             DATA_BODY, 'ForgetRequest',
             description='Matches the current attributes and entities closest in meaning to `query` (cosine similarity above a '
             'fixed threshold, at most `limit`), only among rows the caller may read that lie inside its `memory:forget` '
             'region (403 without that grant). By default each matched attribute ends now and a matched entity has its '
             'current facts ended; history stays readable. `purge` erases them with their history instead; `dryRun` lists '
             'the matches and changes nothing. Passages are never matched.')  # fmt: skip
CHAT = _op('chat', 'chat', 'POST', f'{CTX}/chat', 'The managed chat loop: response cache, retrieval, synthesis, turns stored',
           {200: Answer('The reply with its citations (as server-sent events with `stream: true` or `Accept: text/event-stream`)',
                        'ChatReply', (JSON, 'text/event-stream'))},
           DATA_BODY | {404, 409}, 'ChatRequest',
           description='Answers a user message from memory. First the semantic response cache: an earlier answer to a similar '
           'question (cosine ≥ `response_cache.similarity_threshold`, default 0.92, younger than the freshness window, made '
           'for a caller who can read exactly the same rows, and still valid: none of its facts changed since) is served '
           'without calling the LLM. Otherwise structured lookups and hybrid retrieval feed the configured LLM, or the '
           'extractive composer without one; the caller\'s active instructions shape the reply, and it states a value only '
           'when a current fact or passage answers the question. Then the message is stored as a user turn (its statements '
           'queued for extraction) and the reply as an assistant turn, which is never evidence later. The cache is skipped '
           'for a session that already has turns, with `bypassCache`, a per-call `model`, or when the context disables it.')  # fmt: skip

# ---- views -------------------------------------------------------------------------------------------------------------
STATE = _op('state', 'views', 'GET', f'{CTX}/state', 'Current memory by category', _ok('State'), DATA_GET, query=('limit',),
            description='Everything current the caller may read, per memory category (entities, attributes, relations, '
            'actions), then the active instructions and the open uncertainties; newest first, each list cut at `limit` '
            '(`truncated` says which). Does not reinforce.',
            parameters={'limit': 'Most rows per list, 1–500 (default 100).'})  # fmt: skip
PROFILE = _op('profile', 'views', 'GET', f'{CTX}/profile', 'A prompt-ready profile of the caller', _ok('Profile'), DATA_GET,
              description='A briefing for a prompt, grouped by memory category: `static` (identity), `dynamic` (context) and '
              '`preferences` (knowledge) attribute values, and the active instructions. The caller\'s own facts (what it said '
              'about itself) lead the section of their category and are also listed in `selfFacts`. Does not reinforce.')  # fmt: skip
UNCERTAINTIES = _op('uncertainty', 'views', 'GET', f'{CTX}/uncertainty', 'Uncertainty flags, open or settled', _ok('UncertaintyPage'),
                    DATA_GET, query=('cursor', 'limit', 'resolved'),
                    description='The flags memory raised when it was unsure — a value too uncertain to replace the current '
                    'one, a conversation contradicting an explicit write, a hedge, a self-correction, a date it could not '
                    'resolve — that the caller may read, oldest first.',
                    parameters={'resolved': '`true`: only settled flags; `false`: only open ones; absent: both.'})  # fmt: skip
RESOLVE = _op('resolve_uncertainty', 'views', 'POST', f'{CTX}/uncertainty/{{uncertainty_id}}/resolve', 'Settle an uncertainty flag',
              _ok('UncertaintyResolved'), DATA_BODY | {404}, 'ResolveUncertainty',
              description='Writes `acceptedValue` as the current value of the flag\'s entity and key, at the flag\'s scope, '
              'ends the competing values and marks the flag resolved, in one transaction. The caller must be able to read and '
              'write the flag\'s scope (else 404); a flag not about one entity and key is 422, and one about another '
              'principal\'s self entity is 400.',
              parameters={'uncertainty_id': 'The flag: the part of its `id` after `uncertainty:`.'})  # fmt: skip
ME = _op('me', 'views', 'GET', f'{CTX}/me', 'Who the key speaks for, and with which grants', _ok('Me'), DATA_GET,
         description='The key\'s principal, that principal\'s grants, the key\'s own attenuation and the effective grants '
         'of this request (delegation and `lens` applied). Needs no grant.')  # fmt: skip
WHOAMI = _op('whoami', 'views', 'GET', '/api/v1/me', 'Who the key speaks for, in the context the key belongs to', _ok('Me'),
             _errors(401, 403, 429, 503),
             description='As `GET /api/v1/{context_id}/me`, for a key alone: a key belongs to one context, and `contextId` '
             'names it (the CLI defaults `--context` to it). A management key is 401.')  # fmt: skip
_INSPECT_TIME = 'Not supported here: any value is 400 (use `POST /query` with `asOf`, or the attribute history).'
INSPECT = _op('inspect', 'views', 'GET', f'{CTX}/inspect', 'The object a typed ref names', _ok('Inspection'), DATA_GET | {404, 501},
              query=('asOf', 'atInstant', 'ref', 'validFrom', 'validUntil'),
              description='Resolves a typed ref: `entity:<type>/<name>` (the entity with its current attributes and relations), '
              '`attribute:<type>/<name>/<key>` (the current value and every earlier one) or `trace:<id>` (as `GET '
              '/traces/{id}`). `relation:`, `passage:` and `document:` refs are 501. Point-in-time inspection is refused '
              'rather than ignored.',
              parameters={'ref': '`entity:<type>/<name>`, `attribute:<type>/<name>/<key>` or `trace:<id>`; a `/` inside a name is '
                          'percent-encoded (`%2F`).', 'asOf': _INSPECT_TIME, 'atInstant': _INSPECT_TIME, 'validFrom': _INSPECT_TIME,
                          'validUntil': _INSPECT_TIME})  # fmt: skip

# ---- entities ------------------------------------------------------------------------------------------------------------
_ENTITY = f'{CTX}/entities/{{entity_type}}/{{name}}'
ENTITIES = _op('list_entities', 'entities', 'GET', f'{CTX}/entities', 'Entities, optionally of one type', _ok('EntityPage'), DATA_GET,
               query=('cursor', 'limit', 'type'),
               description='The entities the caller may read, in id order (type, then normalised name), `limit` per page.',
               parameters={'type': 'Only entities of this type (synonyms fold as on writes).'})  # fmt: skip
ENTITY = _op('get_entity', 'entities', 'GET', _ENTITY, 'An entity with its current attributes and relations', _ok('EntityView'),
             DATA_GET | {404}, parameters=_ENTITY_NAME,
             description='The entity with its current attribute values and its current relations in both directions. Does not '
             'reinforce. An entity the caller cannot read is 404, as if absent.')  # fmt: skip
HISTORY = _op('history', 'entities', 'GET', f'{_ENTITY}/history/{{key}}', 'Every value one attribute has had',
              _ok('AttributeHistory'), DATA_GET | {404}, parameters={**_ENTITY_NAME, 'key': 'The attribute key.'},
              description='Every value of one attribute of the entity, newest first, superseded and expired values included, each '
              'with its validity and provenance.')  # fmt: skip
ENTITY_DELETE = _op('delete_entity', 'entities', 'DELETE', _ENTITY, 'Close an entity and its live facts (history stays)',
                    {204: NO_CONTENT}, DATA | {404}, parameters=_ENTITY_NAME,
                    description='Soft delete: ends now the entity\'s current attributes, relations and actions that lie inside '
                    'the caller\'s `memory:forget` region (rows outside it are untouched); history and point-in-time reads '
                    'still see them. An entity the caller cannot read, or with nothing in its forget region, is 404.')  # fmt: skip

# ---- traces ---------------------------------------------------------------------------------------------------------------
TRACES = _op('list_traces', 'traces', 'GET', f'{CTX}/traces', 'Recent retrieval traces, newest first', _ok('TracePage'), DATA_GET,
             query=('cursor', 'limit'),
             description='Retrieval traces with the answers they fed, newest first: the caller\'s own, or every principal\'s '
             'for a key with `grant:manage` over `*`. A trace\'s texts show only while the caller\'s read grant covers the '
             'region it was made under; otherwise it is `redacted`.',
             parameters={'cursor': 'The `page.nextCursor` of the previous page (the last trace\'s `createdAt`).',
                         'limit': 'Page size, 1–500 (default 50).'})  # fmt: skip
TRACE_STATS = _op('trace_stats', 'traces', 'GET', f'{CTX}/traces/stats', 'Aggregates over a time window', _ok('TraceStats'),
                  DATA_GET, query=('windowHours',),
                  description='Counts over the traces the caller may list (see `GET /traces`) made in the last `windowHours`: '
                  'reads per tier and per endpoint, their mean latency, answers and cache hits.',
                  parameters={'windowHours': 'The window in hours back from now, 1–8760 (default 24).'})  # fmt: skip
TRACE = _op('get_trace', 'traces', 'GET', f'{CTX}/traces/{{trace_id}}', 'One trace with its one-hop neighbourhood', _ok('Trace'),
            DATA_GET | {404},
            description='One retrieval, response or decision trace with its neighbours: a retrieval\'s answer and the cache '
            'hits that reused it; a decision trace\'s input and outcomes. Another principal\'s trace is 404 unless the key '
            'has `grant:manage` over `*`.',
            parameters={'trace_id': '`retrieval_trace:<id>`, `response_trace:<id>`, `decision_trace:<id>`, or a bare id (each kind '
                        'is tried).'})  # fmt: skip

# ---- lifecycle and self-service keys ---------------------------------------------------------------------------------------
SWEEP = _op('run_sweep', 'lifecycle', 'POST', f'{CTX}/lifecycle/{{sweep}}', 'Run one lifecycle sweep now (grant:manage over *)',
            _ok('SweepResult'), DATA | {404},
            description='Runs one sweep for this context now, as the schedules do: `decay` applies one day\'s importance '
            'decay (context ×0.95, knowledge ×0.995, identity none), `expire` ends context-category facts older than '
            '`lifecycle.context_ttl_days` (default 7), `purge-traces` deletes traces past their retention, `reindex` rebuilds '
            'vector indexes that grew. Needs `grant:manage` over `*` (403); an unknown sweep is 404.',
            parameters={'sweep': '`decay`, `expire`, `purge-traces` or `reindex`.'})  # fmt: skip
_ROTATE_TTL = 'A new lifetime from now, in seconds (1–315360000); absent: the expiry stays.'
OWN_KEYS = _op('list_own_keys', 'keys', 'GET', f'{CTX}/keys', "The calling principal's keys", _ok('OwnKeys'), DATA_GET,
               description='Every key of the calling principal (names, grants, expiry; never secrets), the calling key marked '
               '`current`.')  # fmt: skip
OWN_KEY_MINT = _op('mint_own_key', 'keys', 'POST', f'{CTX}/keys', 'Mint a key for the calling principal',
                   {201: Answer('Created (the secret is shown once)', 'KeyView')}, DATA_BODY | {409}, 'SelfKeyCreate',
                   query=TTL,
                   description='A new key for the calling principal, its secret shown once in this answer. It is never more '
                   'powerful than the calling key: its grants lie within the caller\'s effective grants (wider is 400) and it '
                   'expires no later. Refused while acting on behalf of another principal (403); a principal holds at most 100 '
                   'keys, and a name it already holds is 409.')  # fmt: skip
OWN_KEY_ROTATE = _op('rotate_own_key', 'keys', 'POST', f'{CTX}/keys/{{name}}/rotate', 'Rotate one of the calling principal’s keys',
                     _ok('KeyView', 'Rotated (the new secret is shown once)'), DATA | {400, 404},
                     query=TTL, parameters={**_KEY_NAME, 'ttlSeconds': _ROTATE_TTL, 'ttl_seconds': _ROTATE_TTL},
                     description='A new secret for one of the calling principal\'s keys; the old secret stops working at once. '
                     'Its grants stay, and so does its expiry unless `ttlSeconds` is given (never beyond the calling key\'s). A '
                     'key that grants more or lives longer than the calling key is 403.')  # fmt: skip
OWN_KEY_DELETE = _op('delete_own_key', 'keys', 'DELETE', f'{CTX}/keys/{{name}}', 'Revoke one of the calling principal’s keys',
                     {204: NO_CONTENT}, DATA | {400, 404}, parameters=_KEY_NAME,
                     description='Revokes one of the calling principal\'s keys at once (the calling key itself included). A key '
                     'that grants more or lives longer than the calling key is 403; a name the principal does not hold is '
                     '404.')  # fmt: skip

# ---- management: contexts, principals, their keys -------------------------------------------------------------------------
_PRINCIPAL = f'{MGMT}/{{context_id}}/principals/{{principal_id}}'
CONTEXTS = _op('list_contexts', 'contexts', 'GET', MGMT, 'Every context of the deployment', _ok('ContextSummary', array=True), MANAGEMENT,
               description='Every context (tenant) of the deployment, with its id and creation time. Needs the management '
               'key.')  # fmt: skip
CONTEXT_CREATE = _op('create_context', 'contexts', 'POST', f'{MGMT}/{{context_id}}', 'Create a context',
                     {201: Answer('Created', 'ContextView')}, MANAGEMENT | {400, 409, 413, 422}, 'ContextCreate',
                     description='Creates a context: its own database (migrated), its config (validated) and its reserved '
                     'principals `admin` and `system`. Then mint a key for `admin` with `POST …/principals/admin/keys/{name}`. '
                     'An existing id is 409.')  # fmt: skip
CONTEXT_GET = _op('get_context', 'contexts', 'GET', f'{MGMT}/{{context_id}}', 'A context with its effective config',
                  _ok('ContextView'), IN_CONTEXT,
                  description='The context with its effective config: the defaults with its stored override merged over them.')  # fmt: skip
CONTEXT_PATCH = _op('patch_context', 'contexts', 'PATCH', f'{MGMT}/{{context_id}}', "Deep-merge into a context's config",
                    _ok('ContextView'), IN_CONTEXT | {400, 413}, 'ContextPatch',
                    description='Deep-merges `config` into the stored override and validates the result: a bad value is 400 and '
                    'changes nothing. Concurrent patches are applied one after the other, none lost.')  # fmt: skip
CONTEXT_DELETE = _op('delete_context', 'contexts', 'DELETE', f'{MGMT}/{{context_id}}', 'Delete a context and all its data',
                     {204: NO_CONTENT}, IN_CONTEXT,
                     description='Drops the context\'s database (every memory, trace and principal), its keys and its record. '
                     'Irreversible.')  # fmt: skip
PRINCIPAL_CREATE = _op('create_principal', 'contexts', 'POST', f'{MGMT}/{{context_id}}/principals', 'Create a principal',
                       {201: Answer('Created', 'PrincipalView'), 200: Answer('Already there with this id and body', 'PrincipalView')},
                       IN_CONTEXT | {400, 409, 413}, 'PrincipalCreate',
                       description='Creates a principal — who keys act as — with its grants and default write scopes. With an '
                       '`externalId` that already exists it returns that principal (200) instead: create-or-get.')  # fmt: skip
PRINCIPALS = _op('list_principals', 'contexts', 'GET', f'{MGMT}/{{context_id}}/principals', "A context's principals",
                 _ok('PrincipalView', array=True), IN_CONTEXT,
                 description='Every principal of the context, the reserved `admin` and `system` included.')  # fmt: skip
PRINCIPAL_GET = _op('get_principal', 'contexts', 'GET', _PRINCIPAL, 'One principal of a context', _ok('PrincipalView'), IN_CONTEXT,
                    description='One principal with its grants and default scopes; an unknown id is 404.')  # fmt: skip
PRINCIPAL_PATCH = _op('patch_principal', 'contexts', 'PATCH', _PRINCIPAL, 'Change a principal', _ok('PrincipalView'),
                      IN_CONTEXT | {400, 403, 409, 413}, 'PrincipalPatch',
                      description='Changes the fields given. Its keys follow a grant change at once: a key never exceeds its '
                      'principal. `system` cannot be changed (403).')  # fmt: skip
PRINCIPAL_DELETE = _op('delete_principal', 'contexts', 'DELETE', _PRINCIPAL, 'Delete a principal and its keys', {204: NO_CONTENT},
                       IN_CONTEXT | {403},
                       description='Deletes the principal, its keys and everything bound to it: its sessions with their turns '
                       'and passages, its turns in other sessions, its self entity with every fact about it, its traces. '
                       '`admin` and `system` cannot be deleted (403).')  # fmt: skip
KEYS = _op('list_keys', 'contexts', 'GET', f'{_PRINCIPAL}/keys', "A principal's keys", _ok('KeyView', array=True), IN_CONTEXT,
           description='The principal\'s keys (names, grants, expiry; never secrets), expired ones included until deleted.')  # fmt: skip
KEY_MINT = _op('mint_key', 'contexts', 'POST', f'{_PRINCIPAL}/keys/{{name}}', 'Mint a key for a principal',
               {201: Answer('Created (the secret is shown once)', 'KeyView')}, IN_CONTEXT | {400, 403, 409, 413}, 'KeyCreate',
               query=TTL, parameters={'name': 'The new key\'s name: 1–64 characters of `A-Z a-z 0-9 _ . -`, unique per principal.'},
               description='Mints a key for the principal: the secret is shown once, in this answer, and stored only as an '
               'HMAC. Its grants may only narrow the principal\'s (wider is 400); it expires after `ttlSeconds` or at '
               '`expiresAt` (at most one), else never. A name the principal holds, or a 101st key, is 409; the `system` '
               'principal holds no keys (403).')  # fmt: skip
KEY_ROTATE = _op('rotate_key', 'contexts', 'POST', f'{_PRINCIPAL}/keys/{{name}}/rotate', "Rotate a principal's key",
                 _ok('KeyView', 'Rotated (the new secret is shown once)'), IN_CONTEXT | {400}, query=TTL,
                 parameters={**_KEY_NAME, 'ttlSeconds': _ROTATE_TTL, 'ttl_seconds': _ROTATE_TTL},
                 description='A new secret for the key; the old one stops working in the same transaction. Its grants stay, and '
                 'so does its expiry unless `ttlSeconds` is given.')  # fmt: skip
KEY_DELETE = _op('delete_key', 'contexts', 'DELETE', f'{_PRINCIPAL}/keys/{{name}}', "Revoke a principal's key", {204: NO_CONTENT},
                 IN_CONTEXT | {400}, parameters=_KEY_NAME, description='Revokes the key at once; an unknown name is 404.')  # fmt: skip

# ---- management: export and restore (docs/backup-format.md) ----------------------------------------------------------------
NDJSON = 'application/x-ndjson'
_IMPORT = f'{MGMT}/{{context_id}}/import'
_EXPORT_HEADER = {
    'type': 'object',
    'description': "The export's first line (its header): the import checks it, then takes the records that follow.",
    'required': ['format', 'version', 'context', 'exportedAt', 'counts', 'embedding'],
    'properties': {
        'format': {'const': 'agent-memory-export', 'description': 'Always `agent-memory-export`: what the file is.'},
        'version': {'type': 'integer', 'description': 'The format version (1); a version this service does not read is 400.'},
        'context': {'type': 'string', 'description': 'The context the export was made from (it may be restored under another id).'},
        'exportedAt': {'type': 'string', 'description': 'When the export began (RFC 3339).'},
        'counts': {'type': 'object', 'additionalProperties': {'type': 'integer'},
                   'description': 'How many records of each kind follow; the commit refuses an import where fewer arrived.'},
        'embedding': {'type': 'object', 'description': '`{model, dimension}` of the vectors in the file; another model than '
                      "this deployment's is 400 (vectors of two models are not comparable)."},
        'traces': {'type': 'boolean', 'description': 'Whether the three trace kinds are in the file.'},
    },
}  # fmt: skip
_IMPORT_ID = {'import_id': 'The import, as `POST …/import` returned it (`importId`).'}
EXPORT = _op('export_context', 'contexts', 'GET', f'{MGMT}/{{context_id}}/export', 'Export a context: a page of NDJSON',
             {200: Answer('A page of the export (the first starts with the header); header X-Next-Cursor names the next page',
                          media=(NDJSON,), schema={'type': 'string', 'description': 'NDJSON: one record per line.'})},
             IN_CONTEXT | {400}, query=('cursor', 'traces'),
             description='Everything of the context, as docs/backup-format.md describes: a header line, the context record '
             '(config, decay clock), then principals, sessions, turns, passages, entities, attributes with their whole history, '
             'relations, actions, instructions and uncertainties, vectors included; traces with `traces=true`. At most 2 MB a '
             'page: while the answer has an `X-Next-Cursor` header, ask again with `cursor` set to it.',
             parameters={'cursor': 'The `X-Next-Cursor` of the previous page; absent: the first page.',
                         'traces': '`true`: include the retrieval, response and decision traces (default `false`).'})  # fmt: skip
IMPORT_START = _op('start_import', 'contexts', 'POST', _IMPORT, 'Start restoring an export into this empty context',
                   {201: Answer('Import opened: send the records, then commit', 'ImportStarted')}, IN_CONTEXT | {400, 409, 413},
                   _EXPORT_HEADER,
                   description='Opens an import with the export\'s header (its first line). The context must be empty: no '
                   'memory and no principal but `admin` and `system` (else 409). Starting an import drops whatever an earlier, '
                   'unfinished one staged.')  # fmt: skip
IMPORT_RECORDS = _op('stage_import', 'contexts', 'POST', f'{_IMPORT}/{{import_id}}',
                     "Send a batch of the export's lines (checked and staged)", _ok('ImportStaged'), IN_CONTEXT | {400, 409, 413},
                     'ImportRecords', parameters=_IMPORT_ID,
                     description='Checks every line of the batch as the format says and stages them, where no read sees them; a '
                     'wrong line refuses the batch with its line number (400). A batch sent again is accepted once; a kind and '
                     'id already staged from another line is 400. 409 once the commit has begun.')  # fmt: skip
IMPORT_COMMIT = _op('commit_import', 'contexts', 'POST', f'{_IMPORT}/{{import_id}}/commit',
                    'Check the import is whole, then write it (call again until done)', _ok('ImportCommitted'),
                    IN_CONTEXT | {400, 409}, parameters=_IMPORT_ID,
                    description='First checks that every record the header announced arrived and that each link that must be in '
                    'the file is (400 with the line otherwise: nothing is written). Then writes the staged rows, 100 per '
                    'transaction, for about ten seconds: while `done` is false, call again; a commit that stopped resumes. '
                    '409 when the context stopped being empty before writing began.')  # fmt: skip
IMPORT_DISCARD = _op('discard_import', 'contexts', 'DELETE', f'{_IMPORT}/{{import_id}}', 'Discard an import before its commit',
                     {204: NO_CONTENT}, IN_CONTEXT | {409}, parameters=_IMPORT_ID,
                     description='Drops the import and what it staged; the context is untouched. 409 once writing has begun '
                     '(commit again to finish it).')  # fmt: skip

# ---- MCP (JSON-RPC through the MCP SDK: bodies described as schemas, not models) ---------------------------------------------
_MCP_MESSAGE = {
    'type': 'object',
    'description': 'A JSON-RPC 2.0 request or notification of the MCP Streamable HTTP transport (stateless, JSON answers): '
    'tools/list, tools/call (remember, recall, context, reflect, forget, inspect), initialize, ping.',
    'required': ['jsonrpc', 'method'],
    'properties': {'jsonrpc': {'const': '2.0', 'description': 'The JSON-RPC version: always `2.0`.'},
                   'id': {'type': ['string', 'integer'], 'description': 'The request id, echoed in the answer; absent on a notification.'},
                   'method': {'type': 'string', 'description': '`initialize`, `ping`, `tools/list`, `tools/call`, or a notification '
                              'such as `notifications/initialized`.'},
                   'params': {'type': 'object', 'description': "The method's parameters; for `tools/call`, `{name, arguments}`."}},
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
}, _errors(401, 429, 503), _MCP_MESSAGE,
    description='The Model Context Protocol server for agents, with the same Bearer keys as the REST routes (the key\'s '
    'context is the one served). Tools: `remember`, `recall`, `context`, `reflect`, `forget`, `inspect`; `recall` and '
    '`context` never use the response cache and reinforce what they return. A failing tool answers a result with '
    '`isError: true`; malformed params are the JSON-RPC error -32602.')  # fmt: skip
_MCP_OTHER = {405: Answer('Use POST', schema=_ANY)}
MCP_GET = _op(
    'get',
    'mcp',
    'GET',
    '/mcp',
    'Stateless server: no server-initiated stream',
    _MCP_OTHER,
    _errors(401, 429, 503),
    description='The server is stateless and pushes nothing, so there is no event stream to open: 405.',
)
MCP_DELETE = _op(
    'delete',
    'mcp',
    'DELETE',
    '/mcp',
    'Stateless server: no session to end',
    _MCP_OTHER,
    _errors(401, 429, 503),
    description='The server is stateless and keeps no MCP session, so there is none to end: 405.',
)

OPERATIONS: tuple[Operation, ...] = tuple(value for value in dict(globals()).values() if isinstance(value, Operation))
