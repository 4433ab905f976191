"""Jinja2 prompt templates: the packaged ``task_templates/`` folder, optionally overridden by a user folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2
import jinja2.meta

from longbench100.catalog.entities import ENTITY_TYPES
from longbench100.catalog.task_info import NIAH_TASKS
from longbench100.core.errors import UserError
from longbench100.core.paths import packaged_dir

_PASSAGES = [
    {"kind": "passage", "number": 1, "text": "A made-up first passage.", "title": "First"},
    {"kind": "passage", "number": 2, "text": "A made-up second passage.", "title": None},
]
_RECORD = {"kind": "record", "text": "key-1: value-1", "key": "key-1", "value": "value-1"}
_QUESTION = {"question": "What does the second passage say?"}
EXAMPLE_VARIABLES: dict[str, list[dict]] = {
    "kv_retrieval": [
        {
            "blocks": [_PASSAGES[0], _RECORD, _PASSAGES[1]],
            "gold_numbers": [],
            "start_key": "key-1",
            "hops": 1,
        }
    ],
    "kv_retrieval_chain": [
        {
            "blocks": [_PASSAGES[0], _RECORD, _PASSAGES[1]],
            "gold_numbers": [],
            "start_key": "key-1",
            "hops": 2,
        }
    ],
    "counting_stars": [
        {
            "blocks": _PASSAGES,
            "gold_numbers": [],
            "options": ["[1, 2, 3, 4]", "[2, 1, 3, 4]", "Not enough information."],
        }
    ],
    "passage_retrieval": [
        {"blocks": _PASSAGES, "gold_numbers": [2], "summary": "A summary of the second passage."}
    ],
    "passage_count": [{"blocks": _PASSAGES, "gold_numbers": []}],
    "single_doc_qa": [
        {"blocks": _PASSAGES, "gold_numbers": [2], **_QUESTION, "closed_book": False},
        {"blocks": [], "gold_numbers": [], **_QUESTION, "closed_book": True},
    ],
    "multi_doc_qa": [
        {"blocks": _PASSAGES, "gold_numbers": [1, 2], **_QUESTION, "closed_book": False},
        {"blocks": [], "gold_numbers": [], **_QUESTION, "closed_book": True},
    ],
    "single_doc_sum": [
        {"blocks": _PASSAGES, "gold_numbers": [2], "request": ""},
        {"blocks": _PASSAGES, "gold_numbers": [2], "request": "Describe its methods."},
    ],
    "multi_doc_sum": [
        {"blocks": _PASSAGES, "gold_numbers": [1, 2], "request": ""},
        {"blocks": _PASSAGES, "gold_numbers": [2], "request": "What do they report on treatment?"},
    ],
    "variable_tracking": [
        {
            "context": "Rain falls. VAR ABCDE = 12345. VAR FGHIJ = VAR ABCDE.",
            "value": "12345",
            "count": 2,
            "example": {
                "context": "Rain. VAR ABC = 54321. VAR DEF = VAR ABC.",
                "value": "54321",
                "count": 2,
                "answer": "ABC, DEF",
            },
        }
    ],
    "common_words": [
        {
            "word_list": "1. apple\n2. river\n3. apple",
            "count": 1,
            "example": {"word_list": "1. stone\n2. stone\n3. lamp", "answer": "stone"},
        }
    ],
    "frequent_words": [{"text": "abcdef .... qrstuv abcdef", "noise": "...."}],
    **{
        task: [
            {
                "context": "Plain text. One of the special magic numbers for calm-otter is: 1234567. More text.",
                "kind": "numbers",
                "what": "number",
                "many": False,
                "keys": "calm-otter",
            }
        ]
        for task in NIAH_TASKS
    },
    "json_kv": [{"context": '{"key-1": "value-1", "key-2": "value-2"}', "key": "key-2"}],
    # HELMET retrieval tasks
    "rag_hard": [
        {
            "blocks": [{**_PASSAGES[0], "title": "A title"}, _PASSAGES[1]],
            "gold_numbers": [2],
            **_QUESTION,
            "demos": [
                {
                    "documents": [{"title": "T", "text": "Some text."}],
                    "question": "Q?",
                    "answer": "A",
                }
            ],
        }
    ],
    "rerank": [
        {
            "passages": [
                {"id": "123456", "title": None, "text": "A made-up passage."},
                {"id": "654321", "title": "A title", "text": "Another."},
            ],
            **_QUESTION,
            "demos": [
                {
                    "question": "Q?",
                    "passages": [{"id": "111111", "title": None, "text": "T."}],
                    "ranking": "[111111]",
                }
            ],
        }
    ],
    # HELMET in-context learning (tasks/icl.py)
    **{
        task: [
            {
                "demonstrations": "text: Where is the nearest harbor?\nlabel: 1\n\ntext: Who painted the mill?\nlabel: 0",
                "text": "Who built the bridge?",
            }
        ]
        for task in ("icl_trec_coarse", "icl_trec_fine", "icl_banking77", "icl_clinc150")
    },
    **{
        task: [{"blocks": _PASSAGES, "gold_numbers": [2], **_QUESTION}] for task in ("qa_1", "qa_2")
    },
    # HELMET long-document tasks (tasks/long_document.py)
    "long_doc_qa": [
        *(
            {
                "context": "A long document ... [the rest of the text is omitted]",
                **_QUESTION,
                "closed_book": False,
                "answer_form": form,
            }
            for form in ("phrase", "quote", "sentences")
        ),
        {"context": "", **_QUESTION, "closed_book": True, "answer_form": "phrase"},
    ],
    "long_doc_sum": [{"context": "A long document ... [the rest of the text is omitted]"}],
    # ETHIC attribution
    "attributing": [
        {
            "blocks": _PASSAGES,
            "gold_numbers": [1, 2],
            **_QUESTION,
            "target": "It says little.",
            "kind": "answer",
        },
        {
            "blocks": _PASSAGES,
            "gold_numbers": [1, 2],
            "question": "",
            "target": "Both report a storm.",
            "kind": "summary",
        },
    ],
    "document_summarizing": [{"blocks": _PASSAGES, "gold_numbers": [1, 2], "words": 100}],
    # ETHIC one-document tasks (tasks/one_document.py)
    "section_summarizing": [{"blocks": _PASSAGES, "gold_numbers": [1, 2], "sentences": 5}],
    "organizing": [
        {
            "blocks": _PASSAGES,
            "gold_numbers": [1, 2],
            "summaries": [
                {"label": "A", "text": "The second passage."},
                {"label": "B", "text": "The first passage."},
            ],
        }
    ],
    "recalling": [
        {"context": "Anna met Mr. Brook in the garden.", "entity": ENTITY_TYPES["people"]},
        {
            "context": "As set out in Section 2.1 and Exhibit B.",
            "entity": ENTITY_TYPES["legal_references"],
        },
    ],
    "document_organizing": [
        {
            "blocks": _PASSAGES,
            "gold_numbers": [1, 2],
            "summaries": [
                {"label": "A", "text": "The second passage."},
                {"label": "B", "text": "The first passage."},
            ],
        }
    ],
}
"""Representative variables of each task's template: every shape a builder renders (closed-book prompts too)."""


def passage_phrase(numbers: list[int]) -> str:
    """How a prompt names passages: "Passage 4", "Passages 3 and 7", "Passages 1, 2 and 5" ("" for none)."""
    if len(numbers) < 2:
        return f"Passage {numbers[0]}" if numbers else ""
    return f"Passages {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"


def with_derived(variables: dict) -> dict:
    """The variables plus those every template may use that derive from them: ``gold_passages`` names the gold passages."""
    return {"gold_passages": passage_phrase(variables.get("gold_numbers", [])), **variables}


MATERIAL_VARIABLES = frozenset(
    {"blocks", "context", "passages", "word_list", "text", "demonstrations", "question"}
)
"""The variables that carry a task's context or question: a template uses each its task gives."""


class PromptTemplates:
    """Loads ``<task>.j2`` from the user's folder first, then from the packaged templates."""

    def __init__(self, user_folder: Path | None = None) -> None:
        if user_folder is not None and not user_folder.is_dir():
            raise UserError(f"--templates {user_folder}: no such folder")
        search = ([str(user_folder)] if user_folder else []) + [str(packaged_dir("task_templates"))]
        self._environment = jinja2.Environment(
            loader=jinja2.FileSystemLoader(search),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
        )
        self._cache: dict[str, jinja2.Template] = {}
        self._trees: dict[str, jinja2.nodes.Template] = {}
        self._fingerprints: dict[str, dict[str, str]] = {}

    def get(self, task: str) -> jinja2.Template:
        """The compiled template for ``task``; a syntax error names the file and line."""
        if task not in self._cache:
            try:
                self._cache[task] = self._environment.get_template(f"{task}.j2")
            except jinja2.TemplateSyntaxError as error:
                raise UserError(
                    f"template {error.filename or task + '.j2'} line {error.lineno}: {error.message}"
                ) from None
            except jinja2.TemplateNotFound:
                raise UserError(f"no template {task}.j2 in the template folders") from None
            except UnicodeDecodeError as error:
                raise UserError(
                    f"template {task}.j2: not valid UTF-8 (byte {error.start + 1})"
                ) from None
        return self._cache[task]

    def render(self, task: str, variables: dict) -> str:
        """Render ``task``'s template; a missing variable names the template."""
        try:
            return self.get(task).render(**with_derived(variables))
        except jinja2.UndefinedError as error:
            raise UserError(f"template {task}.j2: {error.message}") from None

    def validate(self, task: str) -> None:
        """Render ``task``'s template with :data:`EXAMPLE_VARIABLES` (undefined names are errors), before any work.

        A user template that names a variable the task does not provide, or fails in any other way
        while rendering, is reported in one line naming the template file.
        """
        template = self.get(task)
        for variables in EXAMPLE_VARIABLES[task]:
            try:
                template.render(**with_derived(variables))
            except jinja2.UndefinedError as error:
                raise UserError(f"template {template.filename}: {error.message}") from None
            except Exception as error:  # noqa: BLE001 - a user template can fail in any way; say where
                raise UserError(
                    f"template {template.filename}: {type(error).__name__}: {error}"
                ) from None

        self._refuse_missing_material(task, template)

    def _refuse_missing_material(self, task: str, template: jinja2.Template) -> None:
        """Refuse a template that never uses the task's context or question (a prompt of the
        template's own words alone, at whatever budget)."""
        parsed = self._tree(_source_file(template).read_text(encoding="utf-8"))
        used = set(jinja2.meta.find_undeclared_variables(parsed))
        for name in jinja2.meta.find_referenced_templates(parsed):
            if name:  # an included template's variables are the task's too
                included = _source_file(self._environment.get_template(name))
                used |= jinja2.meta.find_undeclared_variables(
                    self._tree(included.read_text(encoding="utf-8"))
                )
        given = {key for variables in EXAMPLE_VARIABLES[task] for key in variables}
        missing = sorted(given & MATERIAL_VARIABLES - used)
        if missing:
            raise UserError(
                f"template {template.filename}: never uses {', '.join(missing)}: "
                "a prompt needs the task's context and question"
            )

    def _tree(self, text: str) -> jinja2.nodes.Template:
        """The syntax tree of a template's ``text``, parsed once (a run reads it to validate the
        template and to fingerprint it)."""
        if text not in self._trees:
            self._trees[text] = self._environment.parse(text)
        return self._trees[text]

    def fingerprint(self, task: str) -> dict[str, str]:
        """Where ``task``'s template came from and the sha256 of its text, followed by the text of any
        template it includes (for the manifest); worked out once, as the template is compiled once."""
        if task not in self._fingerprints:
            self._fingerprints[task] = self._fingerprint(task)
        return dict(self._fingerprints[task])

    def _fingerprint(self, task: str) -> dict[str, str]:
        """:meth:`fingerprint`, worked out."""
        path = _source_file(self.get(task))
        text = path.read_bytes()
        digest = hashlib.sha256(text)
        parsed = self._tree(text.decode("utf-8"))
        included = jinja2.meta.find_referenced_templates(parsed)  # None: named at render time
        for name in sorted(name for name in included if name):
            # an included template (the niah tasks share one) is part of the prompt too
            digest.update(_source_file(self._environment.get_template(name)).read_bytes())
        return {"path": str(path), "sha256": digest.hexdigest()}


def _source_file(template: jinja2.Template) -> Path:
    """The file ``template`` was read from (all are loaded from folders)."""
    assert template.filename is not None, "templates are loaded from folders"
    return Path(template.filename)
