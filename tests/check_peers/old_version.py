"""A game on a2a-sdk alone whose card offers agentcade/1 but whose replies to a message
speak desktop-game/5: exactly ``REPLY-PROTOCOL`` (and so ``SESSION-MESSAGE-REPLY``: the
main agent cannot use such a reply)."""

from __future__ import annotations

from typing import Any

from tests.check_peers import app, card, reply


def play(game_input: dict[str, Any], live: set[str], context_id: str) -> list[tuple[dict[str, Any], bool]]:
    kind = game_input.get("kind")
    if kind == "start":
        live.add(context_id)
        return [(reply("开始啦，猜一个数。"), True)]
    if context_id not in live:
        return [(reply("这一局已经结束了。", "ended"), True)]
    if kind == "end":
        live.discard(context_id)
        return [(reply("好的，下次再玩。", "ended"), True)]
    return [({**reply("不对哦。"), "protocol": "desktop-game/5"}, True)]


def make_app(port: int) -> Any:
    c = card(port, game_id="peer_old", name="旧版本游戏", capabilities=["motion"])
    return app(c, c, play)
