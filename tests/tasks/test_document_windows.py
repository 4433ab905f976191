"""The one-document tasks' row layout (tasks/document_windows.py) on made-up chunk counts: homes never overlap,
a home holds every length it is paired at, rows spread over documents first, and rows beyond what the
documents hold read the least shared window, unpaired."""

import random

import pytest

from longbench100.tasks.document_windows import WindowLayout, span_end

FRONT = 1


def layout(
    chunk_counts: list[list[int]], budgets: list[int], rows: int, sources: list[str] | None = None
) -> WindowLayout:
    return WindowLayout(
        lambda index: chunk_counts[index],
        [sum(counts) for counts in chunk_counts],
        sources or ["books"] * len(chunk_counts),
        budgets,
        rows,
        FRONT,
    )


def chunks_read(counts: list[int], first: int, budget: int) -> set[int]:
    """The chunks a window from ``first`` at ``budget`` takes (as OneDocumentTask.window takes them)."""
    taken, total = set(), 0
    for index in range(first, len(counts)):
        if total + counts[index] > budget:
            break
        taken.add(index)
        total += counts[index]
    return taken


@pytest.mark.parametrize("seed", range(20))
def test_paired_rows_read_their_home_at_every_length_and_no_two_homes_overlap(seed):
    rng = random.Random(seed)
    documents = [
        [rng.randint(200, 1024) for _ in range(rng.randint(5, 120))]
        for _ in range(rng.randint(1, 6))
    ]
    budgets = sorted(rng.sample([4096, 8192, 16384, 32768, 65536], 3))
    rows = rng.randint(1, 12)
    plan = layout(documents, budgets, rows)
    taken: dict[int, set[int]] = {}
    for home in plan.homes:
        if home is None:
            continue
        chunks = set(range(home.first, home.end))
        assert not chunks & taken.setdefault(
            home.document, set()
        )  # no two rows' slots share a chunk
        taken[home.document] |= chunks
        assert (
            home.first >= FRONT
            and sum(documents[home.document][home.first : home.end]) >= home.size
        )
    for budget in budgets:
        for row, home in enumerate(plan.homes):
            placement = plan.placement(budget, row)
            if placement is not None and placement.paired:
                assert (placement.document, placement.first) == (
                    home.document,
                    home.first,
                ) and home.size >= budget
            elif home is not None:
                assert (
                    home.size < budget
                )  # a row leaves its home only at lengths the home cannot fill


def test_rows_take_every_documents_first_slot_before_any_second():
    documents = [[1000] * 40, [1000] * 40, [1000] * 40]
    plan = layout(documents, [8192, 16384], 5)
    assert [home.document for home in plan.homes] == [0, 1, 2, 0, 1]
    assert all(plan.placement(budget, row).paired for budget in (8192, 16384) for row in range(5))


def test_rows_beyond_the_longest_lengths_slots_are_unpaired_there_and_share_least():
    documents = [[1000] * 60, [1000] * 20]  # one 32k slot in all; 8k slots in what is left
    plan = layout(documents, [8192, 32768], 3)
    assert [(home.document, home.size) for home in plan.homes] == [(0, 32768), (0, 8192), (1, 8192)]
    assert all(plan.placement(8192, row).paired for row in range(3))
    first, second, third = (plan.placement(32768, row) for row in range(3))
    assert first.paired and not first.shared
    assert (second.document, second.paired, second.shared) == (0, False, True)
    shared = chunks_read(documents[0], first.first, 32768) & chunks_read(
        documents[0], second.first, 32768
    )
    assert 0 < len(shared) * 1000 <= 32768 // 2  # the least it can share, and no more than half
    assert third is None  # every window left would share more than half: the row is left out there


def test_a_tie_in_sharing_prefers_the_home_source():
    documents = [[1000] * 10, [1000] * 60, [1000] * 60]
    plan = layout(documents, [8192, 32768], 3, ["contracts", "books", "contracts"])
    assert [home.document for home in plan.homes] == [
        1,
        2,
        0,
    ]  # row 2's home: the short contract, 8k only
    row_two = plan.placement(
        32768, 2
    )  # both long documents are as shared at 32k: the contract wins
    assert (row_two.document, row_two.paired, row_two.shared) == (2, False, True)


def test_no_placement_where_no_document_fills_the_length():
    plan = layout([[1000] * 6], [4096, 65536], 1)
    assert plan.placement(65536, 0) is None and plan.placement(4096, 0).paired


def test_span_end_is_the_shortest_run_holding_the_size():
    assert span_end([3, 3, 3], 0, 3, 6) == 2 and span_end([3, 3, 3], 1, 3, 7) is None
