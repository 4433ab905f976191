"""Several tokenizers as one: a prompt fits a budget when it fits it in every one of them.

``generate --tokenizer cl100k_base,o200k_base,hf:<tokenizer.json>`` fits every prompt against the
*largest* of its counts. :class:`JointTokenizer` answers every count that fitting asks (a text, a
text spliced from known texts, a batch) with the maximum over its members, each member counting
exactly as it does alone, so the prompt a task builds is within budget in every member, and as full
as the tightest member allows. Texts are cut (a filler's opening) at the shortest of the members'
cuts. Encoding and decoding to ids are the first member's, where a task reads ids (a long document
cut at a token), and its count decides nothing on its own: the joint count does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from longbench100.core.errors import UserError
from longbench100.text.spliced_count import Part
from longbench100.text.tokenization import Tokenizer, load_tokenizer


class JointIndex:
    """One known text indexed by each member tokenizer (:meth:`JointTokenizer.index`)."""

    def __init__(self, members: Sequence) -> None:
        self.members = list(members)
        self.text = self.members[0].text

    def inner(self, start: int, end: int) -> tuple[int, int, int] | None:
        """The first member's inner cuts and tokens (for an estimate: exact counts ask all)."""
        return self.members[0].inner(start, end)


class JointTokenizer:
    """Several :class:`Tokenizer` s counted together: every count is the largest member count."""

    def __init__(self, members: Sequence[Tokenizer]) -> None:
        self.members = tuple(members)
        self.spec = ",".join(member.spec for member in self.members)
        self.identity = "+".join(member.identity for member in self.members)

    @property
    def counting(self) -> str:
        """The members' ways of counting, joined (see :attr:`Tokenizer.counting`)."""
        return ",".join(member.counting for member in self.members)

    @property
    def origin(self) -> str:
        """Where each member's vocabulary came from."""
        return "; ".join(f"{member.spec}: {member.origin}" for member in self.members)

    def encode(self, text: str) -> list[int]:
        """The first member's token ids of ``text``."""
        return self.members[0].encode(text)

    def decode(self, ids: Sequence[int]) -> str:
        """The first member's text of token ids."""
        return self.members[0].decode(ids)

    def count(self, text: str) -> int:
        """The largest member count of ``text``."""
        return max(member.count(text) for member in self.members)

    def learned_piece_counts(self, text: str) -> Sequence[int] | None:
        """Always ``None``: a joint count is the largest member count, never one member's learned
        pieces (see :meth:`Tokenizer.learned_piece_counts`)."""
        return None

    def recall_pieces(self, text: str) -> int | None:
        """Always ``None``: no member's learned pieces give the joint count (see
        :meth:`Tokenizer.recall_pieces`); ``text`` is counted."""
        return None

    @property
    def reads_openings_off(self) -> bool:
        """``False``: an opening is cut by every member (see :attr:`Tokenizer.reads_openings_off`)."""
        return False

    def opening_tokens(self, text: str, width: int, max_tokens: int) -> str | None:
        """Always ``None``: an opening after a whole token is the first member's, encoded (see
        :meth:`Tokenizer.opening_tokens`)."""
        return None

    def count_whole(self, text: str) -> int:
        """The largest member count of ``text``, each member tokenizing it in one go."""
        return max(member.count_whole(text) for member in self.members)

    def counts(self, text: str) -> dict[str, int]:
        """Each member's count of ``text``, by its spec, in member order."""
        return {member.spec: member.count(text) for member in self.members}

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """The largest member count of each text."""
        return [
            max(counts) for counts in zip(*(member.count_batch(texts) for member in self.members))
        ]

    def index(self, text: str, keep: bool = True) -> JointIndex:
        """``text`` indexed by every member (see :meth:`Tokenizer.index`)."""
        return JointIndex([member.index(text, keep) for member in self.members])

    def joined_index(self, texts: Sequence[str], separator: str) -> JointIndex:
        """``separator.join(texts)`` indexed by every member (:meth:`Tokenizer.joined_index`)."""
        return JointIndex([member.joined_index(texts, separator) for member in self.members])

    def count_parts(self, parts: Sequence[Part]) -> int:
        """The largest member count of the text ``parts`` spell, spans of a :class:`JointIndex` read
        through each member's own index."""
        return max(
            member.count_parts(_member_parts(parts, number))
            for number, member in enumerate(self.members)
        )

    def count_known(self, text: str, known: Sequence[tuple[str, int]]) -> int:
        """The largest member count of ``text`` (see :meth:`Tokenizer.count_known`)."""
        return max(member.count_known(text, known) for member in self.members)

    def located(self, text: str) -> list[Part] | None:
        """The parts the first member that counted ``text`` last found it made of
        (:meth:`Tokenizer.located`), else ``None``."""
        return next(
            (parts for member in self.members if (parts := member.located(text)) is not None),
            None,
        )

    def opening_length(self, text: str, width: int, max_tokens: int) -> int | None:
        """The shortest of the members' :meth:`Tokenizer.opening_length`: an opening no member
        counts much over ``max_tokens``; ``None`` when every member counts ``text[:width]`` within
        it."""
        lengths = [member.opening_length(text, width, max_tokens) for member in self.members]
        found = [length for length in lengths if length is not None]
        return min(found) if found else None


def _member_parts(parts: Sequence[Part], number: int) -> list[Part]:
    """``parts`` with each span of a :class:`JointIndex` taken as a span of its member number
    ``number``'s index."""
    return [
        (part[0].members[number], part[1], part[2])
        if isinstance(part, tuple) and isinstance(part[0], JointIndex)
        else part
        for part in parts
    ]


def load_first_tokenizer(spec: str) -> Tokenizer:
    """The first tokenizer of a ``--tokenizer`` value (the one whose count ``prompt_tokens`` holds),
    for what reads a data folder in one tokenizer (information coverage, Dolce probes)."""
    return load_tokenizer(spec.split(",")[0])


def load_tokenizers(spec: str, *, chat: bool = False) -> Tokenizer:
    """The tokenizer of a ``--tokenizer`` value: one form (see :func:`load_tokenizer`), or several
    separated by commas, which make a :class:`JointTokenizer` (the first named is the one whose
    count ``prompt_tokens`` keeps). A joint tokenizer is typed as a :class:`Tokenizer`: it has every
    method and attribute the fitting, counting and generation code reads of one (tests generate
    through it)."""
    specs = [part.strip() for part in spec.split(",")]
    if len(specs) == 1:
        return load_tokenizer(spec, chat=chat)
    if not all(specs):
        raise UserError(f"--tokenizer {spec!r}: an empty name between commas")
    if len(set(specs)) < len(specs):
        raise UserError(f"--tokenizer {spec!r} names a tokenizer twice")
    if chat:
        raise UserError("--chat-template needs one tokenizer (the model's), not several")
    members = [load_tokenizer(part) for part in specs]
    identities = [member.identity for member in members]
    if len(set(identities)) < len(identities):
        raise UserError(
            f"--tokenizer {spec!r} names one vocabulary twice (two names of the same tokenizer)"
        )
    return cast(Tokenizer, JointTokenizer(members))
