"""The sans-IO core: everything that decides, and nothing that waits.

Wire models (``protocol``), SKILL.md and tool models (``skill``, ``tools``), settings
(``settings``), answer judging (``judge``), speech hygiene (``speech``), trace records
(``trace``), the allowed robot calls (``allowlist``), vector drawings (``vector``) and the
one error tree (``errors``). Nothing here imports trio, h11 or a network library (the
layer test holds it to that); ``tools`` awaits an async tool it is given, nothing more.
"""
