"""template.yaml agrees with the code: every declared route reaches a handler that resolves it, every handler route is
declared, the sample events in tests/events route to their handlers, and the runtime/layer/schedule settings hold."""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from local_runtime.events import LocalContext, http_event
from local_runtime.template_routes import http_routes, load_template, load_template_long_form
from tests.support.handlers import MANAGEMENT_KEY, ROOT, Api, load_function

TEMPLATE = ROOT / 'template.yaml'
EVENTS_DIR = ROOT / 'tests' / 'events'
NOT_EVENTS = {'local_env.json'}  # `sam local invoke --env-vars` file, not an event
PLACEHOLDER_KEYS = {'Bearer REPLACE_WITH_DEV_KEY', 'Bearer REPLACE_WITH_MANAGEMENT_KEY'}
DUMMY_PARAMS = {'context_id': 'dev', 'sweep': 'decay'}
SCHEDULE_KEYS = {'version', 'id', 'detail-type', 'source', 'account', 'time', 'region', 'resources', 'detail'}


# ---------------------------------------------------------------- template loading


@cache
def template() -> dict[str, Any]:
    return load_template_long_form(TEMPLATE)


def resources(kind: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in template()['Resources'].items() if res['Type'] == kind}


def functions() -> dict[str, dict[str, Any]]:
    return {name: res['Properties'] for name, res in resources('AWS::Serverless::Function').items()}


def folder_of(props: dict[str, Any]) -> str:
    """``CodeUri: functions/<folder>/`` -> ``<folder>``."""
    match = re.fullmatch(r'functions/(\w+)/?', props['CodeUri'])
    assert match, f'CodeUri {props["CodeUri"]!r} is not a functions/<folder>/ path'
    return match.group(1)


def template_routes() -> list[tuple[str, str, str]]:
    """(folder, METHOD, path) for every HttpApi event in the template."""
    return [(r.code_dir.name, r.method, r.path) for r in http_routes(load_template(TEMPLATE), ROOT)]


def code_routes() -> set[tuple[str, str, str]]:
    """(folder, METHOD, path) for every operation a function's resolver registers (``app.operation(...)``)."""
    found = set()
    for app_py in sorted((ROOT / 'functions').glob('*/app.py')):
        app = getattr(load_function(app_py.parent.name), 'app', None)
        for op in getattr(app, 'operations', []):
            assert op.function == app_py.parent.name, f'{op.method} {op.path} is registered by functions/{app_py.parent.name}'
            found.add((op.function, op.method, op.path))
    return found


def route_regex(path: str) -> re.Pattern[str]:
    return re.compile('^' + re.sub(r'\\\{(\w+)\\\}', r'(?P<\1>[^/]+)', re.escape(path)) + '$')


def invoke(folder: str, event: dict[str, Any]) -> tuple[int, Any]:
    result = load_function(folder).lambda_handler(event, LocalContext(function_name=folder))
    raw = result.get('body') or ''
    media = (result.get('headers') or {}).get('Content-Type', '').split(';')[0]
    return result['statusCode'], (json.loads(raw) if raw and media in ('application/json', 'application/problem+json') else raw or None)


def is_route_missing(status: int, body: Any) -> bool:
    return status == 404 and isinstance(body, dict) and body.get('detail') == 'no such route'


def event_files() -> list[Path]:
    return sorted(p for p in EVENTS_DIR.glob('*.json') if p.name not in NOT_EVENTS)


def http_event_files() -> list[Path]:
    return [p for p in event_files() if json.loads(p.read_text(encoding='utf-8')).get('version') == '2.0']


def route_of(event: dict[str, Any]) -> tuple[str, str, str]:
    """The template route (folder, METHOD, path) that the event's routeKey names."""
    method, _, path = event['routeKey'].partition(' ')
    matches = [r for r in template_routes() if (r[1], r[2]) == (method, path)]
    assert len(matches) == 1, f'routeKey {event["routeKey"]!r} matches {len(matches)} template routes'
    return matches[0]


def expected_unauthenticated_status(folder: str) -> set[int]:
    return {200} if folder == 'health' else {401}


# ---------------------------------------------------------------- (1) routes: template <-> handlers


def test_template_and_handlers_declare_the_same_routes() -> None:
    # Given template.yaml and the handlers' route decorators, When both route sets are read, Then they are equal, with
    # no duplicate and no catch-all
    declared = template_routes()
    assert len(declared) == len(set(declared)), 'a route is declared twice in template.yaml'
    assert not [r for r in declared if '+}' in r[2] or r[2] in ('$default', '/{proxy+}')], 'no proxy catch-all routes'
    assert set(declared) == code_routes(), (
        f'only in template: {sorted(set(declared) - code_routes())}; only in code: {sorted(code_routes() - set(declared))}'
    )


def test_every_function_folder_is_deployed_exactly_once() -> None:
    # Given the functions/ folders, When the template's functions are listed, Then each folder is deployed once with the
    # app.lambda_handler entry point
    folders = sorted(folder_of(props) for props in functions().values())
    assert folders == sorted(p.parent.name for p in (ROOT / 'functions').glob('*/app.py'))
    for name, props in functions().items():
        assert props['Handler'] == 'app.lambda_handler', name
        assert (ROOT / props['CodeUri'] / 'app.py').is_file(), name


def test_http_events_all_attach_to_the_one_http_api() -> None:
    # Given the template, When every Api event is read, Then each attaches to the one HttpApi
    assert list(resources('AWS::Serverless::HttpApi')) == ['HttpApi']
    for name, props in functions().items():
        for event_name, event in (props.get('Events') or {}).items():
            if event['Type'] == 'HttpApi':
                assert event['Properties']['ApiId'] == {'Ref': 'HttpApi'}, f'{name}.{event_name}'


@pytest.mark.parametrize(('folder', 'method', 'path'), template_routes(), ids=lambda v: str(v))
def test_declared_route_is_resolved_by_its_handler(folder: str, method: str, path: str) -> None:
    # Given a concrete path for the declared route, with dummy parameters and no key
    concrete = re.sub(r'\{(\w+)\}', lambda m: DUMMY_PARAMS.get(m.group(1), f'x-{m.group(1)}'), path)
    params = route_regex(path).match(concrete)
    assert params, concrete
    event = http_event(method, concrete, route_key=f'{method} {path}', path_parameters=params.groupdict(),
                       body={} if method == 'POST' else None)  # fmt: skip
    # When the function named by the template handles it
    status, body = invoke(folder, event)
    # Then its resolver has the route: it answers (401 for want of a key), never "no such route"
    assert not is_route_missing(status, body), f'{folder} has no route for {method} {path}'
    assert status in expected_unauthenticated_status(folder) | {422}, (status, body)


# ---------------------------------------------------------------- (2) sample events


def test_every_route_has_a_sample_event() -> None:
    # Given every route and schedule, When tests/events is listed, Then each has a sample event
    covered = {json.loads(p.read_text(encoding='utf-8'))['routeKey'] for p in http_event_files()}
    missing = {f'{m} {p}' for _, m, p in template_routes()} - covered
    assert not missing, f'routes without a tests/events sample: {sorted(missing)}'
    assert {'schedule_hourly.json', 'schedule_daily.json'} <= {p.name for p in event_files()}


@pytest.mark.parametrize('path', http_event_files(), ids=lambda p: p.name)
def test_sample_http_event_is_routed_and_unauthenticated(path: Path) -> None:
    # Given a sample API Gateway v2 event with the placeholder key
    event = json.loads(path.read_text(encoding='utf-8'))
    folder, _, route_path = route_of(event)
    assert event['requestContext']['http']['method'] == event['routeKey'].split(' ')[0]
    assert event['rawPath'] == event['requestContext']['http']['path']
    assert route_regex(route_path).match(event['rawPath']).groupdict() == event.get('pathParameters', {})  # type: ignore[union-attr]
    assert event['headers']['authorization'] in PLACEHOLDER_KEYS
    assert event.get('pathParameters', {}).get('context_id', 'dev') == 'dev'
    # When it is fed to the handler the template routes it to
    status, body = invoke(folder, event)
    # Then the handler resolves it and refuses the placeholder key (health needs none)
    assert not is_route_missing(status, body)
    assert status in expected_unauthenticated_status(folder), (status, body)


@pytest.mark.parametrize('path', http_event_files(), ids=lambda p: p.name)
def test_sample_http_event_is_well_formed_with_a_real_key(path: Path, api: Api) -> None:
    # Given the sample event retargeted at a fresh context, with a real key of the right kind
    event = copy.deepcopy(json.loads(path.read_text(encoding='utf-8')))
    folder, _, route_path = route_of(event)
    management = route_path == '/api/v1/contexts' or route_path.startswith('/api/v1/contexts/')
    prefix = '/api/v1/contexts/' if management else '/api/v1/'
    old, new = f'{prefix}dev', f'{prefix}{api.context_id}'
    for holder, key in ((event, 'rawPath'), (event['requestContext']['http'], 'path')):
        holder[key] = holder[key].replace(old, new, 1)
    if 'context_id' in event.get('pathParameters', {}):
        event['pathParameters']['context_id'] = api.context_id
    event['headers']['authorization'] = f'Bearer {MANAGEMENT_KEY if management else api.key}'
    session_id = json.loads(event.get('body') or '{}').get('sessionId')
    if folder == 'facts' and session_id:  # a turn into a named session: open it first, as sessions_post.json would
        assert api.call('sessions', 'POST', '/sessions', {'id': session_id})[0] == 201
    # When it is handled
    status, body = invoke(folder, event)
    # Then its payload and parameters are accepted (a 404/409 for data that does not exist yet is fine)
    assert not is_route_missing(status, body)
    assert status < 500 and status not in (400, 401, 403, 413, 422), (status, body)


@pytest.mark.parametrize(('name', 'folder'), [('schedule_hourly.json', 'sweep_hourly'), ('schedule_daily.json', 'sweep_daily')])
def test_sample_schedule_event_has_the_eventbridge_shape(name: str, folder: str) -> None:
    # Given a sample schedule event, When it is read and fed to its sweep, Then it has EventBridge's shape and the sweep
    # accepts it
    event = json.loads((EVENTS_DIR / name).read_text(encoding='utf-8'))
    assert set(event) == SCHEDULE_KEYS
    assert event['version'] == '0' and event['detail-type'] == 'Scheduled Event'
    assert event['source'] in ('aws.events', 'aws.scheduler')
    assert dt.datetime.strptime(event['time'], '%Y-%m-%dT%H:%M:%SZ')
    assert len(event['resources']) == 1 and event['resources'][0].startswith('arn:aws:')
    assert isinstance(event['detail'], dict)
    # and the sweep handler accepts it
    result = load_function(folder).lambda_handler(event, LocalContext(function_name=folder))
    assert isinstance(result['results'], list)


def test_deployed_schedule_input_has_the_same_shape_as_the_samples() -> None:
    # Given each deployed schedule's input template, When it is rendered, Then it has the same keys as the samples
    for name in ('SweepHourlyFunction', 'SweepDailyFunction'):
        (event,) = functions()[name]['Events'].values()
        rendered = re.sub(r'\$\{[^}]+\}', 'x', event['Properties']['Input']['Fn::Sub'])
        assert set(json.loads(rendered)) == SCHEDULE_KEYS, name


# ---------------------------------------------------------------- (3) runtime, layer, schedules, logs, secrets


def test_runtime_and_layer_build_for_python312() -> None:
    # Given the template's globals and shared layer, When read, Then they build for python3.12 x86_64 with tracing and
    # JSON logs, from shared/
    globals_fn = template()['Globals']['Function']
    assert globals_fn['Runtime'] == 'python3.12'
    assert globals_fn['Architectures'] == ['x86_64']
    assert globals_fn['Layers'] == [{'Ref': 'SharedLayer'}]
    assert globals_fn['Tracing'] == 'Active' and globals_fn['LoggingConfig']['LogFormat'] == 'JSON'
    layer = template()['Resources']['SharedLayer']
    assert layer['Type'] == 'AWS::Serverless::LayerVersion'
    # built by infra/layers/Makefile in a copy of shared/ (the ContentUri), so it ships compiled bytecode
    assert layer['Metadata']['BuildMethod'] == 'makefile' and layer['Metadata']['ContextPath'] == 'infra/layers'
    assert 'build-SharedLayer:' in (ROOT / 'infra' / 'layers' / 'Makefile').read_text(encoding='utf-8')
    assert layer['Properties']['ContentUri'] == 'shared/' and layer['Properties']['CompatibleRuntimes'] == ['python3.12']
    assert (ROOT / 'shared' / 'requirements.txt').is_file()
    assert (ROOT / 'shared' / 'agent_memory' / 'migrations' / 'context' / '0001_init.surql').is_file()


def test_shared_layer_lock_pins_every_runtime_requirement_at_its_version() -> None:
    # Given shared/requirements.txt (what the code needs) and the layer's pinned closure (what the layer installs with
    # --no-deps), When both are read, Then every requirement is in the closure at the same version
    wanted = _versions(ROOT / 'shared' / 'requirements.txt')
    locked = _versions(ROOT / 'infra' / 'layers' / 'shared' / 'requirements.txt')
    assert wanted and {name: locked.get(name) for name in wanted} == wanted


def test_makefile_layers_reach_exactly_the_functions_that_import_them() -> None:
    # Given the makefile-built layers, When each function's imports are read, Then exactly the functions importing
    # embeddings or MCP get those layers
    for name, folder in (('EmbeddingsLayer', 'embeddings'), ('McpLayer', 'mcp')):
        layer = template()['Resources'][name]
        assert layer['Metadata']['BuildMethod'] == 'makefile' and layer['Properties']['ContentUri'] == 'infra/layers/'
        assert f'build-{name}:' in (ROOT / 'infra' / 'layers' / 'Makefile').read_text(encoding='utf-8')
        assert (ROOT / 'infra' / 'layers' / folder / 'requirements.txt').is_file()
    for props in functions().values():
        source = (ROOT / 'functions' / folder_of(props) / 'app.py').read_text(encoding='utf-8')
        layers = [ref['Ref'] for ref in props.get('Layers', [])]
        if 'embedder.warm()' in source:  # loads the local model at init: it must be there
            assert 'EmbeddingsLayer' in layers, props['CodeUri']
        assert ('McpLayer' in layers) == ('agent_memory.mcp_server' in source), props['CodeUri']
    # McpLayer leaves out what SharedLayer ships, so the two never hold two copies of one package
    shared = set(_versions(ROOT / 'infra' / 'layers' / 'shared' / 'requirements.txt'))
    assert 'pydantic' in shared and not shared & set(_versions(ROOT / 'infra' / 'layers' / 'mcp' / 'requirements.txt'))


def _versions(path: Path) -> dict[str, str]:
    """name -> pinned version, names normalised as pip does (PEP 503) and versions as PEP 440 spells them."""
    lines = (line.split('#')[0].strip() for line in path.read_text(encoding='utf-8').splitlines())
    pins = (line.split('==') for line in lines if '==' in line)
    return {re.sub(r'[-_.]+', '-', name).lower(): version.replace('-beta.', 'b') for name, version in pins}


def test_timeouts_fit_their_triggers() -> None:
    # Given each function's trigger, When its timeout is read, Then HTTP ones fit under API Gateway's 30 s and the
    # others match their expected bound
    assert template()['Globals']['Function']['Timeout'] <= 29  # under the HTTP API's 30 s integration limit
    for name, props in functions().items():
        kinds = {e['Type'] for e in (props.get('Events') or {}).values()}
        expected = 900 if 'ScheduleV2' in kinds else 120 if 'SQS' in kinds else 29
        assert props.get('Timeout', template()['Globals']['Function']['Timeout']) == expected, name


def test_extraction_queue_has_a_bounded_dead_letter_queue_and_partial_batch_failures() -> None:
    # Given the extraction queue and worker, When their properties are read, Then redrive, visibility, max receives,
    # partial batch failures and the DLQ alarm agree
    queue = template()['Resources']['ExtractionQueue']['Properties']
    worker = functions()['ExtractionWorkerFunction']
    assert queue['RedrivePolicy'] == {'deadLetterTargetArn': {'Fn::GetAtt': ['ExtractionDeadLetterQueue', 'Arn']}, 'maxReceiveCount': 3}
    assert queue['VisibilityTimeout'] >= 6 * worker['Timeout']
    assert worker['Environment']['Variables']['AGENT_MEMORY_MAX_RECEIVES'] == str(queue['RedrivePolicy']['maxReceiveCount'])
    (event,) = worker['Events'].values()
    assert event['Type'] == 'SQS' and event['Properties']['FunctionResponseTypes'] == ['ReportBatchItemFailures']
    assert event['Properties']['Queue'] == {'Fn::GetAtt': ['ExtractionQueue', 'Arn']}
    alarm = template()['Resources']['ExtractionDeadLetterAlarm']['Properties']
    assert alarm['Dimensions'][0]['Value'] == {'Fn::GetAtt': ['ExtractionDeadLetterQueue', 'QueueName']}
    assert {'ExtractionQueueUrl', 'ExtractionDeadLetterQueueUrl', 'ExtractionDeadLetterAlarmName'} <= set(template()['Outputs'])


def test_sweeps_are_scheduled_hourly_and_daily_with_retries() -> None:
    # Given the sweep functions, When their schedules are read, Then they run on the schedule parameters, hourly and
    # daily in UTC by default, with two retries
    expected = {
        'SweepHourlyFunction': ('HourlySweepSchedule', 'rate(1 hour)'),
        'SweepDailyFunction': ('DailySweepSchedule', 'cron(15 3 * * ? *)'),
    }
    for name, (parameter, expression) in expected.items():
        (event,) = functions()[name]['Events'].values()
        assert event['Type'] == 'ScheduleV2'
        assert event['Properties']['ScheduleExpression'] == {'Ref': parameter}
        assert template()['Parameters'][parameter]['Default'] == expression
        assert event['Properties']['ScheduleExpressionTimezone'] == 'UTC'
        assert event['Properties']['RetryPolicy']['MaximumRetryAttempts'] == 2


@pytest.mark.parametrize('parameter', ['HourlySweepSchedule', 'DailySweepSchedule'])
def test_schedule_parameters_take_scheduler_expressions_only(parameter: str) -> None:
    # Given a schedule parameter's AllowedPattern, When expressions are tried, Then rate() and cron() pass, anything else
    # is refused by CloudFormation before the schedule is touched
    allowed = re.compile(template()['Parameters'][parameter]['AllowedPattern'])
    for good in ('rate(1 hour)', 'rate(30 minutes)', 'cron(15 3 * * ? *)', 'cron(0 */6 * * ? *)'):
        assert allowed.fullmatch(good), good
    for bad in ('', '1 hour', 'hourly', 'at(2026-01-01T00:00:00)', 'rate(1 hour); x'):
        assert not allowed.fullmatch(bad), bad


def test_local_runtime_runs_the_schedules_on_their_defaults() -> None:
    # Given the parameterised schedules, When the local runtime (make dev) reads them, Then it gets the default
    # expressions, from which it picks its hourly and daily timers
    from local_runtime.template_routes import schedules

    for loaded in (load_template(TEMPLATE), template()):  # short form (!Ref X -> 'X'), as local_runtime reads it, and long
        found = {s.function: s.expression for s in schedules(loaded, ROOT)}
        assert found == {'SweepHourlyFunction': 'rate(1 hour)', 'SweepDailyFunction': 'cron(15 3 * * ? *)'}


# The memory of each function: the parameter it comes from and today's size (the defaults keep it).
MEMORY = {'RetrievalFunction': 'QueryMemorySize', 'ChatFunction': 'QueryMemorySize', 'McpFunction': 'QueryMemorySize',
          'ExtractionWorkerFunction': 'WorkerMemorySize'}  # fmt: skip
MEMORY_DEFAULTS = {'DefaultMemorySize': 512, 'QueryMemorySize': 1024, 'WorkerMemorySize': 1024}


def test_memory_sizes_come_from_parameters_with_todays_defaults() -> None:
    # Given every function, When its memory size is resolved (its own, else the Globals one), Then it is a parameter's,
    # and the defaults give the sizes the functions had before the parameters: 1024 MB where the model runs on every
    # request, 512 MB elsewhere
    assert template()['Globals']['Function']['MemorySize'] == {'Ref': 'DefaultMemorySize'}
    parameters = template()['Parameters']
    for name, props in functions().items():
        size = props.get('MemorySize', template()['Globals']['Function']['MemorySize'])
        assert size == {'Ref': MEMORY.get(name, 'DefaultMemorySize')}, name
    for parameter, default in MEMORY_DEFAULTS.items():
        assert parameters[parameter]['Type'] == 'Number' and parameters[parameter]['Default'] == default, parameter
        assert parameters[parameter]['MinValue'] == 128 and parameters[parameter]['MaxValue'] == 10240, parameter
    # the functions that load the model at cold start are the ones sized by QueryMemorySize/WorkerMemorySize
    warm = {name for name, props in functions().items()
            if 'embedder.warm()' in (ROOT / 'functions' / folder_of(props) / 'app.py').read_text(encoding='utf-8')}  # fmt: skip
    assert warm == set(MEMORY)


LLM_ENV = {
    'AGENT_MEMORY_LLM_BASE_URL': 'LlmBaseUrl',
    'AGENT_MEMORY_LLM_EXTRACTION_MODEL': 'LlmExtractionModel',
    'AGENT_MEMORY_LLM_STRUCTURED_OUTPUT': 'LlmStructuredOutput',
    'AGENT_MEMORY_LLM_TIMEOUT_SECONDS': 'LlmTimeoutSeconds',
    'AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS': 'LlmMaxOutputTokens',
}


def test_llm_settings_reach_every_function_that_calls_the_llm_with_the_key_only_in_the_secret() -> None:
    # Given the functions that call an LLM (the worker extracts; Retrieval, Chat and MCP synthesise answers), When their
    # environment is read, Then every LLM setting comes from its parameter, and no parameter carries the API key
    answering = {'RetrievalFunction', 'ChatFunction', 'McpFunction'}
    for name, props in functions().items():
        variables = (props.get('Environment') or {}).get('Variables', {})
        wanted = {**LLM_ENV, 'AGENT_MEMORY_LLM_SYNTHESIS_MODEL': 'LlmSynthesisModel'} if name in answering else LLM_ENV
        if name in answering | {'ExtractionWorkerFunction'}:
            assert {k: v for k, v in variables.items() if k.startswith('AGENT_MEMORY_LLM_')} == {k: {'Ref': p} for k, p in wanted.items()}
        else:
            assert not [k for k in variables if k.startswith('AGENT_MEMORY_LLM_')], name
    parameters = template()['Parameters']
    # the defaults are what config assumes when the variables are unset: no LLM, auto, 20 s, no max_tokens
    defaults = {p: parameters[p]['Default'] for p in ('LlmBaseUrl', 'LlmStructuredOutput', 'LlmTimeoutSeconds', 'LlmMaxOutputTokens')}
    assert defaults == {'LlmBaseUrl': '', 'LlmStructuredOutput': 'auto', 'LlmTimeoutSeconds': 20, 'LlmMaxOutputTokens': ''}
    tokens = re.compile(parameters['LlmMaxOutputTokens']['AllowedPattern'])
    assert tokens.fullmatch('') and tokens.fullmatch('512') and not tokens.fullmatch('0') and not tokens.fullmatch('-1')
    assert not [p for p in parameters if re.search('api_?key', p, re.IGNORECASE)]
    assert 'llm_api_key' in parameters['SecretArn']['Description']


def test_template_settings_are_ones_config_reads() -> None:
    # Given every AGENT_MEMORY_* variable the template sets, When config.py is read, Then config reads each of them (a
    # misspelt variable would silently keep the default)
    source = (ROOT / 'shared' / 'agent_memory' / 'config.py').read_text(encoding='utf-8')
    variables = set(template()['Globals']['Function']['Environment']['Variables'])
    for props in functions().values():
        variables |= set((props.get('Environment') or {}).get('Variables', {}))
    for variable in sorted(v for v in variables if v.startswith('AGENT_MEMORY_')):
        assert f"_env('{variable.removeprefix('AGENT_MEMORY_')}'" in source, variable


def test_every_function_logs_to_its_own_log_group_with_retention() -> None:
    # Given every function, When its log group is read, Then each has its own group with the retention parameter (30
    # days by default)
    groups = resources('AWS::Logs::LogGroup')
    used = []
    for name, props in functions().items():
        ref = props['LoggingConfig']['LogGroup']['Ref']
        assert ref in groups, name
        used.append(ref)
    assert len(used) == len(set(used))
    for name, group in groups.items():
        assert group['Properties']['RetentionInDays'] == {'Ref': 'LogRetentionInDays'}, name
    assert template()['Parameters']['LogRetentionInDays']['Default'] == 30


def test_secrets_are_read_at_run_time_with_least_privilege() -> None:
    # Given every function, When its environment and policies are read, Then secrets come only from the secret at run
    # time, and only senders may send to the queue
    variables = template()['Globals']['Function']['Environment']['Variables']
    assert variables['AGENT_MEMORY_SECRET_ID'] == {'Ref': 'SecretArn'}
    for var in ('AGENT_MEMORY_DB_PASSWORD', 'AGENT_MEMORY_KEY_SECRET', 'AGENT_MEMORY_MANAGEMENT_KEY'):
        assert variables[var] == '', f'{var} must not carry a secret in the function configuration'
    for var, param in (('AGENT_MEMORY_DB_URL', 'DbUrl'), ('AGENT_MEMORY_DB_NAMESPACE', 'DbNamespace'), ('AGENT_MEMORY_DB_USER', 'DbUser'),
                       ('AGENT_MEMORY_DB_USER_LEVEL', 'DbUserLevel')):  # fmt: skip
        assert variables[var] == {'Ref': param}, var
    assert template()['Parameters']['DbUserLevel']['AllowedValues'] == ['root', 'namespace']
    secret = {'AWSSecretsManagerGetSecretValuePolicy': {'SecretArn': {'Ref': 'SecretArn'}}}
    send = {'SQSSendMessagePolicy': {'QueueName': {'Fn::GetAtt': ['ExtractionQueue', 'QueueName']}}}
    senders = {'FactsFunction', 'ChatFunction', 'McpFunction', 'SweepHourlyFunction'}  # they enqueue (and re-send) extraction jobs
    for name, props in functions().items():
        assert props['Policies'] == ([secret, send] if name in senders else [secret]), name
        if name in senders:
            assert props['Environment']['Variables']['AGENT_MEMORY_QUEUE_URL'] == {'Ref': 'ExtractionQueue'}, name
    assert variables['POWERTOOLS_SERVICE_NAME'] == 'agent-memory'
    assert variables['POWERTOOLS_METRICS_NAMESPACE'] == 'AgentMemory'
    assert not [p for p in template()['Parameters'] if re.search('password|secret_?value|key_secret', p, re.IGNORECASE)]


def test_sample_sqs_event_is_accepted_by_the_worker() -> None:
    # Given the sample SQS event, When the worker handles it, Then no item fails
    event = json.loads((EVENTS_DIR / 'extraction_worker_sqs.json').read_text(encoding='utf-8'))
    record = event['Records'][0]
    assert record['eventSource'] == 'aws:sqs' and json.loads(record['body'])['context'] == 'dev'
    # the sample names a context this test run does not have: the job is skipped, not failed
    assert load_function('extraction_worker').lambda_handler(event, LocalContext()) == {'batchItemFailures': []}
