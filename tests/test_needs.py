"""The rule for tests that need a package: skip on a developer's machine, fail in CI."""

from __future__ import annotations

import pytest

from tests.needs import REQUIRE_ALL, need_module, need_program


def test_a_missing_program_skips_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_ALL, raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install no-such-pkg"):
        need_program("no-such-program-xyz", package="no-such-pkg")


def test_a_missing_program_fails_when_ci_requires_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_ALL, "1")
    with pytest.raises(pytest.fail.Exception, match="no-such-pkg"):
        need_program("no-such-program-xyz", package="no-such-pkg")


def test_a_missing_module_fails_when_ci_requires_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_ALL, "1")
    with pytest.raises(pytest.fail.Exception, match="pip install nope"):
        need_module("no_such_module_xyz", install="pip install nope")


def test_a_present_program_is_found() -> None:
    assert need_program("python3", package="python3")
