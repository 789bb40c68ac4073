"""Citation resolution: the markers a reply keeps are exactly those that name a source it was given."""

from __future__ import annotations

from agent_memory.domain.retrieval import Hit
from agent_memory.domain.synthesis import citation_wire, resolve_citations
from agent_memory.rows.traces import public_citation


def _hit(n: int) -> Hit:
    return Hit(f'attribute:a{n}', 'attribute', 0.5, f'fact {n}', None, {}, None, (f'person/p{n}',), key=f'a{n}')


SOURCES = [_hit(1), _hit(2), _hit(3)]


def test_markers_are_numbered_from_s1_in_the_order_they_appear() -> None:
    # Given a reply citing source 2, then source 1, then source 2 again
    reply, cited = resolve_citations('Bob is 30 [S2]. He lives in Oslo [S1] and works there [S2].', SOURCES)
    # Then the first marker read is [S1], each source keeps one number, and every marker has its citation
    assert reply == 'Bob is 30 [S1]. He lives in Oslo [S2] and works there [S1].'
    assert [(marker, hit.id) for marker, hit in cited] == [('[S1]', 'attribute:a2'), ('[S2]', 'attribute:a1')]


def test_markers_naming_no_given_source_are_stripped_with_their_space() -> None:
    # Given a reply inventing S0 and S4 next to a real S3
    reply, cited = resolve_citations('Alice moved [S0]. She likes tea [S3], not coffee [S4].', SOURCES)
    # Then the invented markers vanish (no dangling space before punctuation) and only source 3 is cited, as [S1]
    assert reply == 'Alice moved. She likes tea [S1], not coffee.'
    assert [(marker, hit.id) for marker, hit in cited] == [('[S1]', 'attribute:a3')]


def test_a_reply_without_sources_cites_nothing() -> None:
    # Given a reply with a marker but no sources, When its citations are resolved, Then the marker is stripped and nothing is cited
    reply, cited = resolve_citations('I do not know [S1].', [])
    assert (reply, cited) == ('I do not know.', [])


def test_the_stored_citation_keeps_what_cache_validity_needs_and_the_wire_form_drops_it() -> None:
    # Given a citation as /chat stores it on the response trace
    hit = SOURCES[0]
    stored = citation_wire('[S1]', hit) | {'table': hit.table, 'key': hit.key, 'entity_refs': list(hit.entity_refs)}
    # Then the client sees the marker, id and snippet but not the table, key or entity refs
    public = public_citation(stored)
    assert public['marker'] == '[S1]' and public['id'] == 'attribute:a1' and public['snippet'] == 'fact 1'
    assert not {'table', 'key', 'entity_refs'} & set(public)
