"""The package list (everything else is in pyproject.toml).

The built-in games' folders are at the top of the repository (``games/``) and are installed
as ``agentcade.games``: a ``package-dir`` mapping, whose subpackages ``packages.find``
cannot discover, so they are listed here.
"""

from setuptools import find_packages, setup

GAMES = ["agentcade.games", *(f"agentcade.games.{name}" for name in find_packages("games"))]

setup(
    packages=[*find_packages(include=["agentcade", "agentcade.*"]), *GAMES],
    package_dir={"agentcade.games": "games"},
)
