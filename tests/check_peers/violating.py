"""A game on a2a-sdk alone that breaks four rules on purpose (and only those four).

* ``CARD-STREAMING``: the served card says ``streaming: false`` (it streams anyway).
* ``DIRECTIVE-UNDECLARED``: ``lights.set_color`` without declaring ``light``.
* ``SESSION-MESSAGE-REPLY``: the final reply to a message has no text.
* ``SESSION-END-ENDED``: ``end`` never ends the session.
"""

from __future__ import annotations

from typing import Any

from tests.check_peers import app, card, reply


def play(game_input: dict[str, Any], live: set[str], context_id: str) -> list[tuple[dict[str, Any], bool]]:
    kind = game_input.get("kind")
    if kind == "start":
        live.add(context_id)
        green = {"call": "lights.set_color", "args": ["#00FF00"]}
        return [(reply(directives=[green]), False), (reply("开始啦，猜一个数。"), True)]
    if context_id not in live:
        return [(reply("这一局已经结束了。", "ended"), True)]
    if kind == "end":
        return [(reply("好的。"), True)]  # session stays active
    return [(reply(""), True)]


def make_app(port: int) -> Any:
    served = card(port, game_id="peer_broken", name="坏游戏", capabilities=["motion"], streaming=False)
    handled = card(port, game_id="peer_broken", name="坏游戏", capabilities=["motion"])
    return app(served, handled, play)
