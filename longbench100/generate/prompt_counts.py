"""The token-count fields of a written record (a sample or its control twin)."""

from __future__ import annotations

from longbench100.text.joint_tokenizer import JointTokenizer
from longbench100.text.tokenization import Tokenizer


def prompt_counts(tokenizer: Tokenizer | JointTokenizer, prompt: str, fitted_tokens: int) -> dict:
    """A record's token counts: ``prompt_tokens``, the count the prompt was fitted by; with several
    tokenizers (fitted by the largest of their counts), the first one's count, then
    ``prompt_tokens_by_tokenizer``, each one's count by its name."""
    if not isinstance(tokenizer, JointTokenizer):
        return {"prompt_tokens": fitted_tokens}
    counts = tokenizer.counts(prompt)
    first = tokenizer.members[0].spec
    return {"prompt_tokens": counts[first], "prompt_tokens_by_tokenizer": counts}
