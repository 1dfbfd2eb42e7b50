"""A compliant agentcade/1 game on a2a-sdk alone: a one-question riddle."""

from __future__ import annotations

from typing import Any

from tests.check_peers import app, card, reply


def play(game_input: dict[str, Any], live: set[str], context_id: str) -> list[tuple[dict[str, Any], bool]]:
    kind = game_input.get("kind")
    if kind == "start":
        live.add(context_id)
        nod = {"call": "motion.play_action", "args": ["nod"]}
        return [(reply(directives=[nod]), False), (reply("什么东西越洗越脏？"), True)]
    if context_id not in live:
        return [(reply("这一局已经结束了。", "ended"), True)]
    if kind == "end":
        live.discard(context_id)
        return [(reply("答案是水，下次再玩。", "ended"), True)]
    text = str(game_input.get("text", ""))
    return [(reply("答对了！" if "水" in text else "不对哦，再想想。"), True)]


def make_app(port: int) -> Any:
    c = card(port, game_id="peer_riddle", name="外部谜语", capabilities=["motion"])
    return app(c, c, play)
