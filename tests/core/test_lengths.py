"""Length labels and task lists."""

import pytest

from longbench100.catalog.task_info import TASKS, parse_task_list
from longbench100.core.errors import UserError
from longbench100.core.lengths import canonical_label, parse_length, parse_length_list


@pytest.mark.parametrize(
    "label,budget", [("2k", 2048), ("8K", 8192), ("128k", 131072), ("5000", 5000)]
)
def test_parse_length(label: str, budget: int) -> None:
    assert parse_length(label) == budget


@pytest.mark.parametrize("label", ["8kk", "0", "0k", "k", "-4k", "8m", ""])
def test_bad_length_labels_are_rejected(label: str) -> None:
    with pytest.raises(UserError, match="bad length label"):
        parse_length(label)


def test_length_list_is_sorted_and_canonical_and_refuses_a_length_given_twice() -> None:
    assert parse_length_list("8k,2k,5000") == [("2k", 2048), ("5000", 5000), ("8k", 8192)]
    assert canonical_label(16384) == "16k"
    with pytest.raises(UserError, match="2k given more than once"):
        parse_length_list("8k,2k,2048")


def test_task_list() -> None:
    assert parse_task_list("all") == list(TASKS)
    assert parse_task_list("multi_doc_sum,kv_retrieval") == ["kv_retrieval", "multi_doc_sum"]
    with pytest.raises(UserError, match="unknown task nope"):
        parse_task_list("kv_retrieval,nope")
