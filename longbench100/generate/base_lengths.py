"""Warnings for base lengths without rows: a task with no sample at a base length loses (part of) its Base Ability."""

from __future__ import annotations

from longbench100.core.lengths import DEFAULT_BASE_LABELS, parse_length


def base_length_warnings(
    rows: dict[str, dict[str, int]], base_labels: tuple[str, ...] = DEFAULT_BASE_LABELS
) -> list[str]:
    """One line per problem, given the rows written per task and length label (the lengths that were generated).

    A task with rows at some base lengths but not others gets a note naming the lengths its Base Ability
    will rest on; a task with rows at no generated base length gets the fix (``--base-lengths`` set to
    its shortest lengths with rows). Base lengths left out of the run are named in one line, and when
    none was generated at all, that line says so.
    """
    generated = {label for by_label in rows.values() for label in by_label}
    present = [label for label in base_labels if label in generated]
    if not present:
        return [
            f"none of the base lengths ({', '.join(base_labels)}) was generated, so scoring with the default "
            f"--base-lengths gives no Base Ability or LongScore: add them to --lengths, or score with --base-lengths set to lengths you generated"
        ]
    longer = [label for label in generated if label not in base_labels]
    only_base = (
        []
        if longer
        else [
            f"every generated length ({', '.join(sorted(generated, key=parse_length))}) is a base "
            "length: Base Ability can be measured but LongScore needs at least one longer length; "
            "add one to --lengths"
        ]
    )
    absent = [label for label in base_labels if label not in generated]
    one = len(absent) == 1
    lines = only_base + (
        [
            f"base {'length' if one else 'lengths'} {', '.join(absent)} {'was' if one else 'were'} not generated; "
            f"every task's Base Ability will rest on {', '.join(present)} only (add {'it' if one else 'them'} to "
            "--lengths, or score with --base-lengths set to lengths you generated)"
        ]
        if absent
        else []
    )
    for task, by_label in rows.items():
        empty = [label for label in present if by_label.get(label, 0) == 0]
        if not empty:
            continue
        filled = [label for label in present if label not in empty]
        if filled:
            lines.append(
                f"{task} has no rows at base length {', '.join(empty)}; its Base Ability will rest on {', '.join(filled)} only"
            )
            continue
        shortest = sorted((label for label, count in by_label.items() if count), key=parse_length)[
            : len(base_labels)
        ]
        fix = (
            f"score it with --base-lengths {','.join(shortest)}"
            if shortest
            else "it has no rows at any length"
        )
        lines.append(
            f"{task} has no rows at any base length ({', '.join(present)}), so it gets no Base Ability or LongScore: "
            f"{fix}, or generate a length its items fit"
        )
    return lines
