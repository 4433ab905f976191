"""The task registry: ``BUILDERS`` finds every task in the module ``TASK_MODULES`` names, and loads
only that module."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import longbench100.tasks as tasks_package
from longbench100.tasks import BUILDERS, TASK_MODULES
from longbench100.tasks.base import TaskBuilder

REPO = Path(__file__).resolve().parents[2]


def _named_builders_in_every_module() -> dict[str, str]:
    """Task name -> module, for every builder class with its own name that a task module defines."""
    found: dict[str, str] = {}
    for module in pkgutil.iter_modules(tasks_package.__path__):
        importlib.import_module(f"{tasks_package.__name__}.{module.name}")
    pending: list[type[TaskBuilder]] = [TaskBuilder]
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if "name" in cls.__dict__:
            found[cls.name] = cls.__module__.rsplit(".", 1)[1]
    return found


def test_the_table_names_every_builder_and_its_module():
    assert _named_builders_in_every_module() == TASK_MODULES
    for task in BUILDERS:
        assert BUILDERS[task].name == task
        assert BUILDERS[task].__module__ == f"longbench100.tasks.{TASK_MODULES[task]}"


def test_looking_up_a_task_imports_its_module_only():
    probe = (
        "import json, sys; from longbench100.tasks import BUILDERS; BUILDERS['niah_single_2']; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('longbench100.tasks.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    loaded = json.loads(done.stdout)
    assert "longbench100.tasks.niah" in loaded
    assert not {
        f"longbench100.tasks.{name}" for name in ("passage_retrieval", "icl", "rerank")
    } & set(loaded)
