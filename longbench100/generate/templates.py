"""Jinja2 prompt templates: the packaged ``task_templates/`` folder, optionally overridden by a user folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2

from ..errors import UserError
from ..paths import packaged_dir


class PromptTemplates:
    """Loads ``<task>.j2`` from the user's folder first, then from the packaged templates."""

    def __init__(self, user_folder: Path | None = None) -> None:
        if user_folder is not None and not user_folder.is_dir():
            raise UserError(f"--templates {user_folder}: no such folder")
        search = ([str(user_folder)] if user_folder else []) + [str(packaged_dir("task_templates"))]
        self._environment = jinja2.Environment(
            loader=jinja2.FileSystemLoader(search), undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False
        )
        self._cache: dict[str, jinja2.Template] = {}

    def get(self, task: str) -> jinja2.Template:
        """The compiled template for ``task``; a syntax error names the file and line."""
        if task not in self._cache:
            try:
                self._cache[task] = self._environment.get_template(f"{task}.j2")
            except jinja2.TemplateSyntaxError as error:
                raise UserError(f"template {error.filename or task + '.j2'} line {error.lineno}: {error.message}") from None
            except jinja2.TemplateNotFound:
                raise UserError(f"no template {task}.j2 in the template folders") from None
        return self._cache[task]

    def render(self, task: str, variables: dict) -> str:
        """Render ``task``'s template; a missing variable names the template."""
        try:
            return self.get(task).render(**variables)
        except jinja2.UndefinedError as error:
            raise UserError(f"template {task}.j2: {error.message}") from None

    def fingerprint(self, task: str) -> dict[str, str]:
        """Where ``task``'s template came from and the sha256 of its text (for the manifest)."""
        template = self.get(task)
        path = Path(template.filename)
        return {"path": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
