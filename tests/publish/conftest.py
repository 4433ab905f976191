"""What the snapshot tests share: ``datasets`` kept offline and out of the user's caches."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def offline_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep ``datasets`` off the network and out of the user's caches; return a cache folder for
    load_dataset."""
    import datasets
    import huggingface_hub

    home = tmp_path / "hf-home"
    for name, value in {
        "HF_HOME": home,
        "HF_DATASETS_CACHE": home / "datasets",
        "HF_MODULES_CACHE": home / "modules",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    for name, value in {
        "HF_HUB_OFFLINE": True,
        "HF_DATASETS_OFFLINE": True,
        "HF_CACHE_HOME": str(home),
        "HF_DATASETS_CACHE": home / "datasets",
        "HF_MODULES_CACHE": home / "modules",
        "DOWNLOADED_DATASETS_PATH": home / "downloads",
        "EXTRACTED_DATASETS_PATH": home / "extracted",
    }.items():
        monkeypatch.setattr(datasets.config, name, value, raising=False)
    return home / "datasets"
