"""The one exception tree: every public error agentcade raises derives from AgentcadeError,
and error kinds are enums, never message text (docs/internals.md, "Errors: one tree")."""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil

import pytest

import agentcade
from agentcade.core.errors import AgentcadeError, InputError, PeerError


def _public_modules() -> list[str]:
    names = ["agentcade"]
    for info in pkgutil.walk_packages(agentcade.__path__, "agentcade."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue  # private modules (agentcade.net._http) hold internal control-flow signals
        names.append(info.name)
    return names


def _public_exceptions() -> list[tuple[str, type[BaseException]]]:
    found = []
    for name in _public_modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not attr.startswith("_")
            ):
                found.append((f"{name}.{attr}", value))
    return found


def test_the_public_modules_define_exceptions_at_all() -> None:
    names = {name for name, _ in _public_exceptions()}
    assert "agentcade.core.errors.GameRemoteError" in names
    assert "agentcade.web.server.PagesError" in names


@pytest.mark.parametrize(("name", "exc"), _public_exceptions(), ids=lambda v: getattr(v, "__name__", v))
def test_every_public_exception_derives_from_the_one_base(name: str, exc: type[BaseException]) -> None:
    assert issubclass(exc, AgentcadeError), f"{name} is outside the error tree"


def test_a_taken_pages_port_is_the_persons_to_fix() -> None:
    from agentcade.web.server import PagesError

    assert issubclass(PagesError, InputError)


def test_an_unknown_list_tasks_page_token_is_the_peers_mistake() -> None:
    from agentcade.a2a.tasks import BadPageToken

    assert issubclass(BadPageToken, PeerError)
    assert issubclass(BadPageToken, ValueError)  # existing handlers keep working


def test_every_error_kind_is_a_string_enum() -> None:
    from agentcade.core import errors

    kinds = [v for k, v in vars(errors).items() if k.endswith("Kind") and inspect.isclass(v)]
    assert kinds
    for kind in kinds:
        assert issubclass(kind, enum.StrEnum), kind
