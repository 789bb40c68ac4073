"""Natural conversation in, correct facts out: the natural-conversation corpus through the API (issues 28 and 29).

Each conversation of ``tests/natural_corpus/<split>`` goes into a fresh context the way its speaker would send it: one
``POST /facts/batch`` per day of its turns (``extract: per_message``; two people talking send each message with its
speaker's ``name``), the extraction worker draining the queue after each. Then the memory's current state (``GET
/state``, ``GET /uncertainty``, the instructions) is scored against the labels (``tests/natural_corpus/scoring.py``),
and every question is asked through ``POST /chat`` (a fresh session each, ``bypassCache``).

Printed: fact precision and recall per family, corrections applied, negations that stored the positive fact, hedges
that became open unknowns, values cut at an abbreviation, entities from fragments, instructions from chit-chat, and the
answers (answerable answered correctly; unanswerable: said it does not know, stated a value).

Without options the built-in stage 0 and the extractive composer run; ``--llm-base-url URL --llm-model NAME`` points
extraction and answers at any OpenAI-compatible endpoint instead (``--llm-api-key`` if it needs one).
Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/natural.py --split blind [--show]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any


def configure(args: argparse.Namespace) -> None:
    if args.llm_base_url:
        os.environ['AGENT_MEMORY_LLM_BASE_URL'] = args.llm_base_url
        os.environ['AGENT_MEMORY_LLM_EXTRACTION_MODEL'] = args.llm_model
        os.environ['AGENT_MEMORY_LLM_SYNTHESIS_MODEL'] = args.llm_model
        if args.llm_api_key:
            os.environ['AGENT_MEMORY_LLM_API_KEY'] = args.llm_api_key
        os.environ['AGENT_MEMORY_EMBEDDING_PROVIDER'] = 'local'


class Service:
    """The handlers of one process on an in-memory engine, and a context per conversation."""

    def __init__(self) -> None:
        from bench_env import CollectingQueue, load_handler

        from agent_memory.composition import get_services

        self.services = get_services()
        self.services.embedder.warm()
        self.queue = CollectingQueue()
        self.services.queue = self.queue
        self.fns = {name: load_handler(name) for name in ('facts', 'extraction_worker', 'views', 'chat')}

    def context(self, name: str) -> tuple[str, str]:
        from agent_memory.domain.contexts import create_context, mint_context_key

        create_context(self.services.control, self.services.store, name, {})
        return name, mint_context_key(self.services.control, name, 'admin', 'bench')

    def call(self, fn: str, ctx: str, key: str, method: str, path: str, body: Any = None, query: dict[str, str] | None = None) -> Any:
        from local_runtime.events import LocalContext, http_event

        event = http_event(method, f'/api/v1/{ctx}{path}', headers={'authorization': f'Bearer {key}'}, body=body, query=query)
        with contextlib.redirect_stdout(io.StringIO()):
            response = self.fns[fn].lambda_handler(event, LocalContext())
        assert response['statusCode'] in (200, 202), response
        return json.loads(response['body'])

    def drain(self) -> None:
        from local_runtime.events import LocalContext, sqs_record

        while self.queue.jobs:
            jobs, self.queue.jobs = self.queue.jobs, []
            for n, job in enumerate(jobs, 1):
                record = sqs_record(f'm{n}', job.to_json(), f'r{n}', 1, 'arn:aws:sqs:local:0:bench', int(time.time() * 1000))
                with contextlib.redirect_stdout(io.StringIO()):
                    result = self.fns['extraction_worker'].lambda_handler({'Records': [record]}, LocalContext())
                assert result == {'batchItemFailures': []}, result


def ask(service: Service, conversation: Any, ctx: str, key: str) -> Any:
    from tests.natural_corpus.scoring import Answers, score_answer

    answers = Answers()
    for question in conversation.questions:
        body = service.call('chat', ctx, key, 'POST', '/chat', {'message': question['q'], 'bypassCache': True})
        score_answer(question, body['reply'], answers)
    return answers


def pct(value: float) -> str:
    return '  n/a' if math.isnan(value) else f'{value:5.3f}'


def report(split: str, total: Any, answers: Any, self_names: list[tuple[str, str, bool]], seconds: float, show: bool) -> None:
    from tests.natural_corpus.scoring import FAMILIES

    print(f'\n## natural conversation, split {split}: fact precision / recall per family\n')
    print('| family | stored | precision | labelled | recall |')
    print('|---|---|---|---|---|')
    for family in FAMILIES:
        stored, labelled = total.stored.get(family, 0), total.labelled.get(family, 0)
        if stored or labelled:
            print(f'| {family} | {stored} | {pct(total.precision(family))} | {labelled} | {pct(total.recall(family))} |')
    print(f'| **all** | {sum(total.stored.values())} | {pct(total.precision())} | {sum(total.labelled.values())} | {pct(total.recall())} |')
    print()
    rows: list[tuple[str, str]] = [
        ('corrections applied', f'{total.corrections[0]}/{total.corrections[1]}'),
        ('negations that stored the positive fact', f'{total.negations_stored[0]}/{total.negations_stored[1]}'),
        ('hedges that became open unknowns', f'{total.hedges[0]}/{total.hedges[1]}'),
        ('hedged values stored as facts', str(total.hedge_facts)),
        ('values cut at an abbreviation', str(total.cut_values)),
        ('entities from fragments', str(total.fragment_entities)),
        ('instructions from chit-chat', str(total.chit_chat_instructions)),
        ('labelled instructions stored', f'{total.instructions[0]}/{total.instructions[1]}'),
        ('events stored (not labelled)', str(total.events)),
        ('self entity shown by the name given', f'{sum(ok for *_, ok in self_names)}/{len(self_names)}'),
    ]
    if answers.answerable or answers.unanswerable:
        rows += [
            ('answerable questions answered correctly', f'{answers.correct}/{answers.answerable} = '
             f'{pct(answers.correct / answers.answerable)}'),
            ('... of which "I don\'t know"', str(answers.answerable_dont_know)),
            ('... quoting a value corrected away', str(answers.wrong_old_value)),
            ('unanswerable: said it does not know', f'{answers.said_dont_know}/{answers.unanswerable} = '
             f'{pct(answers.said_dont_know / answers.unanswerable)}'),
            ('unanswerable: stated a value', f'{answers.stated_value}/{answers.unanswerable} = '
             f'{pct(answers.stated_value / answers.unanswerable)}'),
        ]  # fmt: skip
    print('| measure | value |\n|---|---|')
    for name, value in rows:
        print(f'| {name} | {value} |')
    print(f'\n{seconds:.1f} s')
    if show:
        for line in [*total.wrong, *total.missed, *answers.log]:
            print(' ', line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--split', default='blind', choices=('cases', 'tune', 'tune2', 'blind'))
    parser.add_argument('--only', help='comma-separated conversation ids')
    parser.add_argument('--no-questions', action='store_true')
    parser.add_argument('--show', action='store_true', help='print the wrong and missed items (never on the blind split while tuning)')
    parser.add_argument('--json', help='write the counts here')
    parser.add_argument('--llm-base-url')
    parser.add_argument('--llm-model', default='default')
    parser.add_argument('--llm-api-key')
    args = parser.parse_args()
    configure(args)
    import bench_env  # noqa: F401  # paths and the quiet environment before the service is imported

    from tests.natural_corpus.replay import ACTIVE_INSTRUCTIONS, ingest, stored_state
    from tests.natural_corpus.scoring import Answers, Score, load, score

    conversations = load(args.split)
    if args.only:
        wanted = set(args.only.split(','))
        conversations = [c for c in conversations if c.id in wanted]
    if not conversations:
        sys.exit(f'no conversations in tests/natural_corpus/{args.split}')
    started = time.perf_counter()
    service = Service()
    total, answers = Score(), Answers()
    self_names: list[tuple[str, str, bool]] = []
    progress: Callable[[str], None] = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    for n, conversation in enumerate(conversations, 1):
        ctx, key = service.context(f'nat{n}')
        call = lambda fn, method, path, body, query, ctx=ctx, key=key: service.call(fn, ctx, key, method, path, body, query)  # noqa: E731
        database = service.services.store(ctx).database
        turns = ingest(call, service.drain, conversation)

        def active_instructions(db: str = database) -> list[dict[str, Any]]:
            rows: list[dict[str, Any]] = service.services.db.query(db, ACTIVE_INSTRUCTIONS)[0] or []
            return rows

        stored, shown_as = stored_state(call, active_instructions, conversation, turns)
        result = score(conversation, stored)
        total.add(result)
        given = [
            f['value'] for f in conversation.expected.get('facts', []) if f['key'] == 'name' and f['entity'] == conversation.speakers[0]
        ]
        if given and not conversation.named:
            shown = shown_as[0] if shown_as else ''
            self_names.append((given[0], shown, bool(shown) and any(part in shown for part in given[0].split())))
        if not args.no_questions:
            answers.add(ask(service, conversation, ctx, key))
        progress(
            f'  {conversation.id}: {len(conversation.turns)} turns, precision {pct(result.precision())}, recall {pct(result.recall())}'
        )
    report(args.split, total, answers, self_names, time.perf_counter() - started, args.show)
    if args.json:
        named = ('corrections', 'negations_stored', 'hedges', 'hedge_facts', 'cut_values', 'fragment_entities', 'chit_chat_instructions')
        measures = {name: getattr(total, name) for name in (*named, 'instructions')}
        counts = {'facts': {'stored': total.stored, 'right': total.stored_right, 'labelled': total.labelled, 'found': total.found},
                  'measures': measures | {'self_named': [sum(ok for *_, ok in self_names), len(self_names)]},
                  'answers': {k: v for k, v in vars(answers).items() if k != 'log'}}  # fmt: skip
        with open(args.json, 'w', encoding='utf-8') as out:
            json.dump(counts, out, indent=1)


if __name__ == '__main__':
    main()
