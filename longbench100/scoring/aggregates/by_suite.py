"""Overall figures per suite, for results whose tasks come from one suite or several.

Each suite's overall is :func:`aggregate`'s overall over that suite's overall tasks (its
``[overall] tasks``) among the scored ones, so it follows exactly the rules of the all-task overall;
a suite whose overall method is ``category_mean`` (helmet, as HELMET reports) weighs its tasks so
that every category counts once, whatever its number of tasks. The all-task overall stays a plain
mean over the scored tasks.
"""

from longbench100.catalog.suites import NO_SUITE, category_weights, group_by_suite, load_suite
from longbench100.scoring.aggregates.aggregate import aggregate, task_order
from longbench100.scoring.samples import ScoredSample


def suite_blocks(
    samples: list[ScoredSample],
    base_labels: list[str],
    recorded: dict | None,
    *,
    n_boot: int,
    seed: int,
    unscored: dict[str, str] | None = None,
) -> dict:
    """``{suite: {"tasks": [...], "overall": block | None}}`` for every suite the scored tasks belong to.

    ``recorded`` is the data manifest's suite record (None for folders made before suites); ``tasks``
    lists the suite's scored tasks, and ``overall`` the aggregate over those among its overall tasks
    (None when none of them was scored; null figures when ``unscored``, {task: reason}, names one
    of them: a task of the data without scored rows).
    """
    tasks = sorted(dict.fromkeys(sample.task for sample in samples), key=task_order)
    blocks = {}
    for name, members in group_by_suite(tasks, recorded).items():
        rule = _overall_rule(name, recorded)
        chosen = set(rule["tasks"] if rule and isinstance(rule.get("tasks"), list) else members)
        scored = [task for task in members if task in chosen]
        subset = [sample for sample in samples if sample.task in chosen and sample.task in members]
        weights = category_weights(rule, scored)
        missing = {task: reason for task, reason in (unscored or {}).items() if task in chosen}
        overall = (
            aggregate(
                subset, base_labels, n_boot=n_boot, seed=seed, weights=weights, unscored=missing
            )["overall"]
            if subset
            else None
        )
        blocks[name] = {
            "tasks": members,
            "overall": overall,
            "method": rule.get("method", "mean") if rule else "mean",
        }
    return blocks


def _overall_rule(name: str, recorded: dict | None) -> dict | None:
    """A suite's ``overall`` record (method, tasks, categories): from the manifest, else the packaged suite; None: none."""
    if recorded and name == recorded["name"]:
        overall = recorded.get("overall")
        return overall if isinstance(overall, dict) else None
    if name == NO_SUITE:
        return None
    return load_suite(name).record()["overall"]
