"""Probe outcomes: a 0-1 score from the task's metric, or IDK when the reply declines to answer."""

from __future__ import annotations

import re

from longbench100.folders.data_records import DataRecord
from longbench100.scoring.reply_scores import classic_scores
from longbench100.text.answers import strip_reasoning

# Ways replies say the shown text is not enough; matched on a lower-cased, whitespace-squeezed reply.
_IDK = re.compile(
    r"\b(?:not enough (?:information|info|context|details?)|insufficient (?:information|context)"
    r"|(?:cannot|can ?not|can't|unable to) (?:be )?(?:answer|determine|determined|tell|find|know|say)"
    r"|(?:does|do) not (?:contain|include|provide|mention|say)|doesn't (?:contain|include|provide|mention|say)"
    r"|(?:is )?not (?:mentioned|provided|stated|given|included) in|no (?:information|mention|record|passage) (?:about|of|on|for|that)"
    r"|unanswerable|i don't know|i do not know|unknown)\b"
)
_SHORT_IDK = re.compile(r"^\W*(?:n/?a|none|unknown|idk)\W*$")
_MAX_IDK_WORDS = 40


def is_idk(reply: str) -> bool:
    """Whether ``reply`` declines for lack of information (our explicit option, or a paraphrase of it).

    Reasoning blocks are dropped and only the first ``_MAX_IDK_WORDS`` words are read, so a long
    answer that mentions such a phrase late is not taken for a refusal.
    """
    text = " ".join(strip_reasoning(reply).lower().replace("’", "'").split())
    if _SHORT_IDK.match(text):
        return True
    head = " ".join(text.split()[:_MAX_IDK_WORDS])
    return _IDK.search(head) is not None


def score_replies(records: list[DataRecord], replies: list[str]) -> list[float | None]:
    """Score each reply with its task's metric (classic metrics, no judge); None where it is IDK."""
    scores = classic_scores(records, replies)
    return [None if is_idk(reply) else score for reply, score in zip(replies, scores)]
