"""Overall figures per suite, for results whose tasks come from one suite or several.

Each suite's overall is :func:`aggregate`'s overall over that suite's overall tasks (its
``[overall] tasks``) among the scored ones, so it follows exactly the rules of the all-task overall.
"""

from ..suites import NO_SUITE, group_by_suite, load_suite
from .aggregate import aggregate, task_order
from .samples import ScoredSample


def suite_blocks(samples: list[ScoredSample], base_labels: list[str], recorded: dict | None, *, n_boot: int,
                 seed: int) -> dict:
    """``{suite: {"tasks": [...], "overall": block | None}}`` for every suite the scored tasks belong to.

    ``recorded`` is the data manifest's suite record (None for folders made before suites); ``tasks``
    lists the suite's scored tasks, and ``overall`` the aggregate over those among its overall tasks
    (None when none of them was scored).
    """
    tasks = sorted(dict.fromkeys(sample.task for sample in samples), key=task_order)
    blocks = {}
    for name, members in group_by_suite(tasks, recorded).items():
        chosen = set(_overall_tasks(name, recorded) or members)
        subset = [sample for sample in samples if sample.task in chosen and sample.task in members]
        overall = aggregate(subset, base_labels, n_boot=n_boot, seed=seed)["overall"] if subset else None
        blocks[name] = {"tasks": members, "overall": overall}
    return blocks


def _overall_tasks(name: str, recorded: dict | None) -> list[str] | None:
    """The tasks a suite's overall averages: from the manifest's record, else the packaged suite; None: all."""
    if recorded and name == recorded["name"]:
        overall = recorded.get("overall")
        return list(overall["tasks"]) if isinstance(overall, dict) and isinstance(overall.get("tasks"), list) else None
    if name == NO_SUITE:
        return None
    return list(load_suite(name).overall_tasks)
