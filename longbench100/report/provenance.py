"""The report.md parts that say how the results were made: the settings table and the mixed-settings banner."""

from .load import ModelResult
from .settings import SETTING_KEYS, SettingsCheck, setting_title, show_value
from .table import table_row


def settings_section(results: list[ModelResult], check: SettingsCheck) -> str:
    """ "How these results were made": one row per setting, one column per model; differing rows in bold."""
    differing = {difference.key.split(".")[0] for difference in check.differences}
    header = ["Setting"] + [result.model for result in results]
    lines = [table_row(header), table_row(["---"] * len(header))]
    for key in SETTING_KEYS:
        cells = [_setting_cell(result, key) for result in results]
        title = setting_title(key)
        lines.append(table_row([f"**{title} (differs)**" if key in differing else title] + cells))
    older = [result.model for result in results if not result.settings.recorded]
    parts = [
        "## How these results were made",
        "As recorded by `longbench100 score` in each results.json (docs/results.md).",
        "\n".join(lines),
    ]
    if older:
        parts.append(
            f"Scored by an older longbench100 that recorded no settings block: {', '.join(older)}. "
            'Their settings are read from what the file holds; "unknown" ones could not be compared.'
        )
    return "\n\n".join(parts)


def mixed_banner(check: SettingsCheck, uncompared: list[tuple[str, str]]) -> str | None:
    """A loud warning when the results were made with different settings (``--allow-mixed``), else ``None``."""
    if not check.mixed:
        return None
    items = "\n".join(f"> - {difference.describe()}" for difference in check.differences)
    pairs = ", ".join(f"{a} vs {b}" for a, b in uncompared)
    return (
        "> **WARNING: THESE RESULTS WERE MADE WITH DIFFERENT SETTINGS** (`--allow-mixed`). Their numbers are "
        "not directly comparable and the ranks below mix different measurements:\n>\n"
        f"{items}\n>\n"
        f"> The paired significance test is not run between models made differently ({pairs})."
    )


def _setting_cell(result: ModelResult, key: str) -> str:
    """One model's value of one setting for the table, ``unknown`` when the file does not record it."""
    if not result.settings.known(key):
        return "unknown"
    value = result.settings.values[key]
    if key == "data_fingerprint":
        return f"`{value[:12]}`"
    if key == "metrics" and isinstance(value, dict):
        return ", ".join(f"{task}: {metric}" for task, metric in value.items()) or "none"
    if key == "judge" and isinstance(value, dict):
        return f"{value.get('model')} at {value.get('base_url')}"
    if key == "qa_filter" and value is None:
        return "off"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return show_value(value).strip("'")
