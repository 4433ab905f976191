"""On-disk cache of judge replies, keyed by the judge's settings and the sha256 of the prompt.

Layout: ``<cache>/judge/<model slug>-<8 hex>/<2 hex>/<sha256(prompt)>.json``, where the 8 hex digits
come from the sha256 of the model, the base URL (trailing ``/`` removed) and the reply budget
(``max_tokens``), so changing any of them is a cache miss. Each file is a JSON object with the
model, the settings, the prompt hash, the reply text and its token usage.
Writes are atomic (temporary file in the same folder, then rename), so an interrupted run never
leaves a half-written entry; unreadable entries count as misses.
"""

import hashlib
import json
import re
from pathlib import Path

from longbench100.core.atomic import write_json_atomic
from longbench100.core.paths import cache_dir


def prompt_hash(prompt: str) -> str:
    """The sha256 hex digest of a prompt (UTF-8)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


class JudgeCache:
    """Replies of one judge model, stored under ``root`` (default: the user cache folder + ``judge/``)."""

    def __init__(
        self,
        model: str,
        root: Path | None = None,
        *,
        base_url: str | None = None,
        max_tokens: int | None = None,
    ) -> None:
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("._")[:64] or "model"
        self.model = model
        self.settings = {
            "base_url": None if base_url is None else base_url.rstrip("/"),
            "max_tokens": max_tokens,
        }
        key = json.dumps({"model": model, **self.settings}, sort_keys=True)
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
        self.folder = (root or cache_dir() / "judge") / f"{slug}-{digest}"

    def _path(self, prompt: str) -> Path:
        """Where the reply to ``prompt`` is stored."""
        digest = prompt_hash(prompt)
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, prompt: str) -> dict | None:
        """The cached entry for ``prompt`` (with its ``text``), or ``None`` when absent, unreadable or cut off."""
        try:
            entry = json.loads(self._path(prompt).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            return None
        if entry.get("finish_reason") == "length" and not entry.get("cut_off_kept"):
            return None  # a cut-off reply is asked again, unless its rubric keeps what it holds (chunk annotations)
        return entry

    def put(self, prompt: str, text: str, **usage: object) -> None:
        """Store a reply atomically; ``usage`` adds fields such as token counts and finish reason."""
        entry = {
            "model": self.model,
            **self.settings,
            "prompt_sha256": prompt_hash(prompt),
            "text": text,
            **usage,
        }
        write_json_atomic(self._path(prompt), entry)
