"""Text helpers shared by the metrics: reasoning removal, LongBench answer normalisation, sentences."""

import re
import string
from collections import Counter

from longbench100.text.sentences import REPLY_ABBREVIATIONS, REPLY_LAST_WORD, REPLY_SENTENCE_BREAK

_REASONING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN_REASONING = re.compile(r"^.*</think>", re.DOTALL | re.IGNORECASE)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def strip_reasoning(text: str) -> str:
    """Remove ``<think>...</think>`` blocks (and a dangling reasoning prefix ending in ``</think>``)."""
    text = _REASONING.sub("", text)
    return _OPEN_REASONING.sub("", text).strip()


def normalize_answer(text: str) -> str:
    """LongBench/SQuAD normalisation: lower case, drop punctuation and articles, squeeze whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction_tokens: list[str], reference_tokens: list[str]) -> float:
    """Bag-of-tokens F1 between two token lists (0 when they share no token)."""
    return bag_f1(Counter(prediction_tokens), Counter(reference_tokens))


def bag_f1(prediction: Counter[str], reference: Counter[str]) -> float:
    """:func:`token_f1` of two token lists given as their bags (counted once, compared often)."""
    same = sum((prediction & reference).values())
    if same == 0:
        return 0.0
    precision = same / prediction.total()
    recall = same / reference.total()
    return 2 * precision * recall / (precision + recall)


def split_sentences(text: str) -> list[str]:
    """Split a summary into sentences: at line breaks and after ``.``, ``!`` or ``?`` before a capital or digit.

    Bullet markers are kept with their sentence; empty pieces are dropped.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for match in REPLY_SENTENCE_BREAK.finditer(line):
            if _is_abbreviation(line[start : match.start()]):
                continue
            sentences.append(line[start : match.start()].strip())
            start = match.end()
        sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _is_abbreviation(piece: str) -> bool:
    """True when ``piece`` ends in a title, common abbreviation or single-letter initial plus a period."""
    match = REPLY_LAST_WORD.search(piece)
    if not match:
        return False
    word = match.group(1).lower().lstrip("\"'([")
    return word in REPLY_ABBREVIATIONS or (len(word) == 1 and word.isalpha())
