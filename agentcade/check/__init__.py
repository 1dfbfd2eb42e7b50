"""Compliance check of a game: a folder (declaration, tools, then a served session) or a URL.

``run_check(target)`` returns a ``CheckResult``: one ``Finding`` per rule that ran (``pass``),
or one per problem found (``fail``/``warn``), each with a stable rule ID, a message and a
one-line fix. ``agentcade check`` prints it, writes the JSON / JUnit reports, and exits 1
when anything fails. The guide's "合规检查" table is the contract; ``RULES`` lists every ID.

For a folder: SKILL.md (``check_skill``; its own rule IDs), the game import
(``GAME-LOAD``), the tools (``TOOLS-*``, ``SKILL-TOOL-MISSING``), then the folder is served
on a free 127.0.0.1 port and checked like a URL. For a URL (or the served folder): the card,
then a real session — ``start``, one ``message``, ``end`` — plus a ``message`` to a context
that does not exist. Replies are read with ``A2AClient``; the raw JSON-RPC results it keeps
(``A2AReplyStream.results``) give the DataParts for ``REPLY-FORMAT`` / ``REPLY-UNKNOWN-FIELD``.

One module per job: ``rules`` (the rule table, ``Finding``, ``CheckResult``), ``folder``
(SKILL.md, game import, tools), ``session`` (card and a real session over A2A) and
``report`` (text, JUnit XML, catalog entry).
"""

from __future__ import annotations

from agentcade.check.folder import run_check
from agentcade.check.report import catalog_entry, format_text, to_junit
from agentcade.check.rules import (
    DEFAULT_SAY,
    DEFAULT_START,
    DEFAULT_TIMEOUT,
    FIRST_REPLY_SLOW,
    RULES,
    CheckResult,
    Finding,
)
from agentcade.check.session import check_session

__all__ = [
    "DEFAULT_SAY",
    "DEFAULT_START",
    "DEFAULT_TIMEOUT",
    "FIRST_REPLY_SLOW",
    "RULES",
    "CheckResult",
    "Finding",
    "catalog_entry",
    "check_session",
    "format_text",
    "run_check",
    "to_junit",
]
