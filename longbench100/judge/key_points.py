"""The key points of reference summaries (HELMET summary recall), extracted once by the judge and kept on disk.

Entries live under the cache folder in ``key_points/<model>-<8 hex>/``, one JSON file per reference,
keyed by the judge (model, base URL, reply budget: the 8 hex digits, as for :class:`JudgeCache`),
the reference text and the data fingerprint (the sha256 of the data folder's manifest.json), so a
data folder's key points are extracted once and reused by every later ``score`` run on it.
"""

import json
from pathlib import Path

from longbench100.core.paths import cache_dir
from longbench100.judge.cache import JudgeCache
from longbench100.judge.parse import key_points_parts


class KeyPointStore:
    """Key points by reference summary, for one judge and one data fingerprint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        max_tokens: int | None,
        data_fingerprint: str | None,
        root: Path | None = None,
    ) -> None:
        self.data_fingerprint = data_fingerprint
        self.entries = JudgeCache(
            model, root or cache_dir() / "key_points", base_url=base_url, max_tokens=max_tokens
        )

    def _key(self, reference: str) -> str:
        """The entry key of one reference: the reference text and the data fingerprint."""
        return json.dumps(
            {"data_fingerprint": self.data_fingerprint, "reference": reference}, sort_keys=True
        )

    def get(self, reference: str) -> list[str] | None:
        """The stored key points of ``reference``, or ``None`` when none are stored (or the entry is unreadable)."""
        entry = self.entries.get(self._key(reference))
        parts = None if entry is None else key_points_parts(entry["text"])
        return None if parts is None else parts["key_points"]

    def put(self, reference: str, key_points: list[str]) -> None:
        """Store the key points of ``reference`` (atomically)."""
        self.entries.put(
            self._key(reference),
            json.dumps({"key_points": key_points}, ensure_ascii=False),
            data_fingerprint=self.data_fingerprint,
        )
