"""LoCoMo through ``POST /chat`` without an LLM: does the extractive answer cite the evidence, and say it does not know
when the question's premise is false? And does /chat feed on itself?

Works on the cached ingests of ``bench/locomo.py`` (one context per conversation, each evaluated on a throwaway copy).
Every question goes to ``/chat`` (``bypassCache``, a fresh session each, no model configured):

* answerable categories (single-hop, multi-hop, temporal, open-domain): the share of replies that answer (do not say
  they do not know) and cite a gold evidence turn (a cited passage through its turn, a cited fact through the turn it
  was extracted from), the share whose reply cites one at all (an answer, or a note listed after "I don't know"), and
  the share that say they do not know;
* adversarial questions (category 5: the premise is false, e.g. an event of the other speaker): the share whose reply
  says it does not know, and the share that cite a gold evidence turn anyway.

Echo check: ``/query`` hybrid recall@10 on the conversation's answerable questions before and after the /chat calls,
with the extraction worker run on what /chat stored in between (a question states nothing and a reply is no passage,
so recall must not move).

LoCoMo is CC BY-NC 4.0, evaluation only, read from beside the repository. Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/locomo_chat.py --conversations 0,1,2 [--per-category 40]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_env import CACHE, ROOT, CollectingQueue, load_handler  # noqa: E402,I001  # first: paths and environment before the service imports
from locomo import Scores, cached_ingest, opened_copy, source_turns
from locomo_data import CATEGORIES, Conversation, Question, default_data_path, load

ADVERSARIAL = 5
_DONT_KNOW = re.compile(r"\b(?:don't know|do not know|don't have anything|nothing in memory|no record|holds nothing)\b", re.I)


def says_dont_know(reply: str) -> bool:
    return bool(_DONT_KNOW.search(reply))


def sample(questions: list[Question], per_category: int) -> list[Question]:
    by: dict[int, list[Question]] = defaultdict(list)
    for q in questions:
        by[q.category].append(q)
    return [q for c in sorted(by) for q in by[c][:per_category]]


def evaluate(conv: Conversation, entry: dict[str, Any], services: Any, questions: list[Question]) -> dict[str, Any]:
    from local_runtime.events import LocalContext, http_event, sqs_record

    chat_fn, retrieval_fn, worker_fn = load_handler('chat'), load_handler('retrieval'), load_handler('extraction_worker')
    queue = CollectingQueue()
    services.queue = queue
    store = services.store(entry['context'])
    turn_to_dia = {v: k for k, v in entry['turns'].items()}

    def post(fn: Any, route: str, body: dict[str, Any]) -> dict[str, Any]:
        event = http_event('POST', f'/api/v1/{entry["context"]}/{route}', headers={'authorization': f'Bearer {entry["key"]}'}, body=body)
        with contextlib.redirect_stdout(io.StringIO()):
            response = fn.lambda_handler(event, LocalContext())
        assert response['statusCode'] == 200, response
        result: dict[str, Any] = json.loads(response['body'])
        return result

    def recall(label: str) -> float:
        by_ref = source_turns(store, turn_to_dia)
        scores = Scores()
        for q in (q for q in questions if q.category in CATEGORIES):
            hits = post(retrieval_fn, 'query', {'query': q.text, 'k': 10, 'mode': 'hybrid'})['hits']
            scores.add(q, [{by_ref[h['id']]} if h['id'] in by_ref else set() for h in hits])
        print(f'    {conv.sample_id}: /query recall@10 {label}: {scores.recall(10):.3f}', file=sys.stderr)
        return scores.recall(10)

    before = recall('before /chat')
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for n, q in enumerate(questions, 1):
        body = post(chat_fn, 'chat', {'message': q.text, 'bypassCache': True})
        by_ref = source_turns(store, turn_to_dia)
        cited = {by_ref[c['id']] for c in body['citations'] if c['id'] in by_ref}
        rows.append({'category': q.category, 'dont_know': says_dont_know(body['reply']), 'cites_gold': bool(cited & q.evidence)})
        if n % 25 == 0:
            print(f'    {conv.sample_id}: /chat {n}/{len(questions)}', file=sys.stderr)
    seconds = time.perf_counter() - started
    for n, job in enumerate(queue.jobs, 1):  # what /chat stored goes through extraction, as in production
        record = sqs_record(f'm{n}', job.to_json(), f'r{n}', 1, 'arn:aws:sqs:local:0:bench', int(time.time() * 1000))
        with contextlib.redirect_stdout(io.StringIO()):
            worker_fn.lambda_handler({'Records': [record]}, LocalContext())
    after = recall(f'after {len(questions)} /chat calls')
    return {'rows': rows, 'recall_before': before, 'recall_after': after, 'chat_seconds': seconds, 'chats': len(questions)}


def child(conv: Conversation, data: Path, source: Path, out: Path, per_category: int) -> None:
    command = [sys.executable, __file__, '--data', str(data), '--conversations', str(conv.index), '--per-category', str(per_category),
               '--source', str(source), '--evaluate-into', str(out)]  # fmt: skip
    subprocess.run(command, check=True)


def report(results: dict[int, dict[str, Any]]) -> None:
    rows = [r for result in results.values() for r in result['rows']]
    names = {**CATEGORIES, ADVERSARIAL: 'adversarial'}
    print('\n| category | questions | answered citing gold evidence | reply cites it (answer or notes) | says it does not know |')
    print('|---|---|---|---|---|')
    for c in sorted(names):
        mine = [r for r in rows if r['category'] == c]
        if mine:
            answered = sum(r['cites_gold'] and not r['dont_know'] for r in mine) / len(mine)
            cites = sum(r['cites_gold'] for r in mine) / len(mine)
            unknown = sum(r['dont_know'] for r in mine) / len(mine)
            print(f'| {names[c]} | {len(mine)} | {answered:.3f} | {cites:.3f} | {unknown:.3f} |')
    print('\n| conversation | /query r@10 before | after the /chat calls | /chat calls | ms per /chat |')
    print('|---|---|---|---|---|')
    for index, r in results.items():
        ms = r['chat_seconds'] * 1000 / max(1, r['chats'])
        print(f'| {index} | {r["recall_before"]:.3f} | {r["recall_after"]:.3f} | {r["chats"]} | {ms:.1f} |')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, default=default_data_path(ROOT))
    parser.add_argument('--conversations', default='0,1,2')
    parser.add_argument('--per-category', type=int, default=40, help='questions per category and conversation')
    parser.add_argument('--fresh', action='store_true')
    parser.add_argument('--source', type=Path, help=argparse.SUPPRESS)
    parser.add_argument('--evaluate-into', type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    conversations = load(args.data, [int(i) for i in args.conversations.split(',')], categories={*CATEGORIES, ADVERSARIAL})
    if args.evaluate_into:
        (conv,) = conversations
        with opened_copy(args.source, 'locomo-chat-') as manifest:
            from agent_memory.composition import get_services
            from agent_memory.domain.contexts import patch_context

            services = get_services()
            services.embedder.warm()
            patch_context(services.control, manifest['context'], {'rate_limit': {'enabled': False}})
            result = evaluate(conv, manifest, services, sample(conv.questions, args.per_category))
            args.evaluate_into.write_text(json.dumps(result))
        return
    results: dict[int, dict[str, Any]] = {}
    work = CACHE / 'locomo-chat'
    work.mkdir(parents=True, exist_ok=True)
    for conv in conversations:
        source = cached_ingest(conv, args.data, args.fresh)
        out = work / f'{conv.index}.json'
        child(conv, args.data, source, out, args.per_category)
        results[conv.index] = json.loads(out.read_text())
    report(results)


if __name__ == '__main__':
    main()
