"""The main agent: chats with the family and starts, feeds and ends games.

Theory of operation. Each line is routed in code first (``agentcade.main.router``): a clear
request to start, end or list games, and every line said during a game, is acted on
without the model; only the rest (chat, unclear lines outside a game) goes to the model.
``MainAgent`` wires the two rooms that do the work and decides which game plays:

* ``agentcade.main.conversation``: ``GameConversation``, the conversation with the current
  game (its requests and reply streams, patience, the game timeout, failures, clearing,
  and switching: the old game's goodbye is heard, ``SWITCH_GRACE`` at most, first);
* ``agentcade.main.chat``: ``MainChat``, the model with its four tools — ``list_games``,
  ``start_game(game_id)``, ``end_game``, ``send_message(text)`` —, its prompt and the
  history. A game tool ends the user's turn: what the game says is the answer.

Before any routing, a child's dangerous statement ("我想把手指伸进插座里试试",
``agentcade.core.danger``) gets its caring answer, traced ``danger``; the game does not
hear the line, so it goes on as it was; a bare "好的" right after it (the answer asks
"好吗？") is the host's to answer (``DANGER_HEARD``), not the game's or the model's.
Outside a game, the router is told what just happened (``After``: the game that ended
last, whether its last words offered another round, whether the host's last answer listed
the games or offered one): "再来一局" restarts the game, "再说一遍" repeats its last words,
"随便你挑" starts one picked here at random, all without the model (issue 40).

What stays here: the tools carried out (``send_message`` forwards the user's words
**verbatim**, never the model's paraphrase), what code says when the model fails (a line
that names a game starts it, the rest hears ``MODEL_DOWN``), barge-in, the host's own words
and the shutdown.

Time budgets (``agentcade.core.host_settings.Budgets``): every line is heard within bounded time,
however the model or a game behaves. Patience ("稍等", ``WAIT_TEXT``) is said at most once
a line, whoever keeps the family waiting (the model: ``MainChat``; a game:
``GameConversation``). Input: a line is cut to ``MAX_INPUT`` characters; a long one is
routed in a worker thread (the router's pinyin windows cost about 0.4 ms of CPU per
character).
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import uuid
from typing import Any, Literal

import trio

from agentcade.core.danger import danger
from agentcade.core.ending import declines_offer
from agentcade.core.guard import PRIVATE_LINE, said_personal
from agentcade.core.host_settings import Budgets
from agentcade.core.judge import normalize
from agentcade.core.judge.intents import aside
from agentcade.core.protocol import GameReply
from agentcade.core.speech import MAX_INPUT, clip_input
from agentcade.core.trace import NULL_TRACE, Trace, request_scope
from agentcade.game.client import GameClient, GameInfo
from agentcade.game.turn import clip_text
from agentcade.llm import ChatModel, ToolCall
from agentcade.main.chat import (
    CHAT_FRIENDLY,
    GREETING_REPLY,
    STEERING_NOTE,
    MainChat,
    OfflineMainModel,
)
from agentcade.main.conversation import (
    BUSY_TEXT,
    MAX_INTERMEDIATE,
    NO_GAME,
    REMOTE_CUT_SHORT,
    REMOTE_FAILED,
    REMOTE_SAID_NOTHING,
    REMOTE_SLOW,
    SWITCH_GRACE,
    Current,
    GameConversation,
)
from agentcade.main.output import OutputQueue
from agentcade.main.registry import GameRegistry
from agentcade.main.router import After, Route, describe_text, games_text, route, which_text

__all__ = [
    "BUSY_TEXT",
    "CHAT_FRIENDLY",
    "GREETING_REPLY",
    "MAX_INTERMEDIATE",
    "MODEL_DOWN",
    "REMOTE_CUT_SHORT",
    "REMOTE_FAILED",
    "REMOTE_SAID_NOTHING",
    "REMOTE_SLOW",
    "STEERING_NOTE",
    "WAIT_TEXT",
    "WHICH_GAME",
    "MainAgent",
    "OfflineMainModel",
]

WAIT_TEXT = "稍等一下，我想一想。"
NOT_FOUND = "我还不会玩这个游戏。"
CHAT_FALLBACK = "抱歉，我没听清，你能再说一遍吗？"
WHICH_GAME = "好呀，换一个。想玩哪个游戏？说“玩”加上游戏名就行。"
MODEL_DOWN = "我在呢！就是脑子这会儿有点转不过来，先不聊天啦。游戏照样能玩，说“玩”加上游戏名就行。"
SHUTDOWN_GRACE = 10.0
"""Seconds ``shutdown`` waits for the game's goodbye before forgetting it anyway."""
RESET_GRACE = 1.0
"""Seconds ``shutdown`` then gives the robot's reset to play."""
_ROUTE_INLINE = 40
"""Lines up to this long are routed inline; longer ones in a worker thread."""
DANGER_GAME_TAIL = "我们接着玩吧。"
"""Said after the caring answer when a game runs: it goes on as it was."""
NUMBER_OFFER = "现在没有在玩游戏。想玩{name}吗？说“好”就开始。"
NUMBER_AGAIN = "这一局{name}已经结束了。要再来一局吗？说“好”就开始。"
NOTHING_TO_REPEAT = "刚才的游戏已经结束了。想再玩的话，说“再来一局”就行。"
DANGER_HEARD = "真棒，记住啦！"
"""The answer to a bare yes right after a caring answer ("好吗？" — "好的")."""
_OK = re.compile(r"^(?:嗯+|好|好的|好吧|好呀|好啊|行|知道了|我知道了|知道啦|记住了|记住啦|我记住了|明白了|懂了|ok|对)[啦了呀啊哦的]*$")
_OFFERS = re.compile(r"(?:要不要|想不想|还要|还想|再来|再玩)[^。！？!?]{0,10}[？?]")
"""A game's last words that offer another round ("要不要再来一局？")."""


class MainAgent:
    """See the module docstring. Lives in a nursery that owns its reader tasks."""

    def __init__(
        self,
        registry: GameRegistry,
        output: OutputQueue,
        model: ChatModel,
        nursery: trio.Nursery,
        *,
        trace: Trace = NULL_TRACE,
        budgets: Budgets | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.registry = registry
        self.output = output
        self.trace = trace
        self.shutdown_grace = SHUTDOWN_GRACE
        """How long ``shutdown`` waits for the goodbye (SIGTERM makes it short)."""
        self._waited = False
        self._rng = rng or random.Random()
        self._seen_serial = 0
        """``GameConversation.finished.serial`` when the last line came: a newer one ended since."""
        self._listed = False
        """The host's last answer listed the games."""
        self._host_offer = ""
        """The game the host's last answer offered ("想玩猜数字吗？")."""
        self._cared = False
        """The host's last answer was a caring answer to danger (it asks "好吗？")."""
        budgets = budgets or Budgets()
        self.chat = MainChat(registry, model, nursery, say_wait=self._say_wait, trace=trace, budgets=budgets)
        self.game = GameConversation(
            output, nursery, say=self._say, say_wait=self._say_wait, remember=self.chat.game_said,
            note=self.chat.note_call, trace=trace, budgets=budgets, switch_grace=SWITCH_GRACE,
        )

    @property
    def current(self) -> Current | None:
        """The current game, or None."""
        return self.game.current

    @property
    def history(self) -> list[dict[str, str]]:
        """What was said, as the chat side keeps it (``MainChat.history``)."""
        return self.chat.history

    @property
    def model(self) -> ChatModel:
        """The chat model; the settings page replaces it (``wiring.pipeline``)."""
        return self.chat.model

    @model.setter
    def model(self, model: ChatModel) -> None:
        self.chat.model = model

    @property
    def budgets(self) -> Budgets:
        """The time budgets, the model's turn and the game's alike."""
        return self.chat.budgets

    @budgets.setter
    def budgets(self, budgets: Budgets) -> None:
        self.chat.budgets = self.game.budgets = budgets

    # -- the user's turn ---------------------------------------------------------

    async def on_user(self, text: str) -> None:
        """Handle one utterance; returns when the user's turn is over.

        Code routes first (``agentcade.main.router``): a clear request to start, end or
        list games, and every line said during a game, is acted on without the model.
        Only the rest (chat and unclear lines outside a game) goes to the model.
        """
        rid = uuid.uuid4().hex
        with request_scope(rid):
            if len(text) > MAX_INPUT:
                self.trace.record("input_clipped", chars=len(text))
                text = clip_input(text)
            private = said_personal(text)
            if private is not None:  # stays with the child: not traced, not in the history, no game hears it
                in_game = self.game.playing
                self.trace.record("personal_data_heard", topic=private.topic, game=in_game)
                risk = danger(text)  # a danger in the same line is answered first
                if risk is not None:
                    self.trace.record("danger", topic=risk.topic, game=in_game)
                await self._say(
                    (risk.answer if risk is not None else "") + PRIVATE_LINE + (DANGER_GAME_TAIL if in_game else "")
                )
                return
            self.trace.record("user_input", text=text)
            self.history.append({"role": "user", "content": text})
            self._waited = False
            playing = self.game.playing
            after = self._after()
            cared, self._cared = self._cared, False
            hit = danger(text)
            if hit is not None:  # before any model, in or out of a game; the game never hears it
                self.trace.record("danger", topic=hit.topic, clause=hit.clause, game=playing)
                await self._say(hit.answer + (DANGER_GAME_TAIL if playing else ""))
                self._cared = True
                return
            if cared and _OK.match(normalize(text)):  # "好吗？" — "好的": for the host, not the game
                self.trace.record("main_route", route="danger_heard", game=playing, why="yes to the caring answer")
                await self._say(DANGER_HEARD)
                return
            games = self.registry.games
            if len(text) <= _ROUTE_INLINE:
                decision = route(text, games, playing, after)
            else:  # pure, but CPU-bound: the event loop keeps serving meanwhile
                decision = await trio.to_thread.run_sync(route, text, games, playing, after)
            self.trace.record("main_route", route=decision.kind, game=decision.game_id, why=decision.why)
            if decision.kind == "model":
                await self._ask_model(text, decision.named, may_start=bool(decision.named) or decision.asks_game)
            else:
                await self._act(decision, text)

    def _after(self) -> After:
        """What happened just before this line (``router.After``); read once per line."""
        finished = self.game.finished
        fresh = finished is not None and finished.serial != self._seen_serial
        self._seen_serial = finished.serial if finished is not None else 0
        listed, offered_game = self._listed, self._host_offer
        self._listed, self._host_offer = False, ""
        if finished is None:
            return After(listed=listed, offered_game=offered_game)
        last = "".join(finished.words[-1:])
        return After(
            game_id=finished.client.info.id, fresh=fresh, offered="again" if _OFFERS.search(last) else None,
            listed=listed, offered_game=offered_game,
        )

    async def _act(self, decision: Route, text: str) -> None:
        """Carry out a decision made in code."""
        if decision.kind in ("restart", "repeat", "random", "which", "number"):
            await self._after_game(decision, text)
            return
        if decision.kind == "describe" and (described := self.registry.get(decision.game_id)) is not None:
            await self._say(describe_text(described.info))
            self._host_offer = described.info.id
            return
        if decision.kind == "start":
            client = self.registry.get(decision.game_id)
            if client is not None:
                await self.start_game(client, text)
                return
        elif decision.kind == "end":
            await self.game.end(text, asked=True)
            return
        elif decision.kind == "change":
            current = self.current
            await self.game.end(text, asked=True)
            if current is not None:
                with trio.move_on_after(self.game.switch_grace):  # the goodbye (and the answer) first
                    await current.ended.wait()
            await self._say(WHICH_GAME)
            return
        elif decision.kind == "forward":
            current = self.current
            if current is not None and _OFFERS.search("".join(current.words[-1:])) and declines_offer(normalize(text)):
                self.trace.record("main_route", route="end", game=current.info.id, why="no to the game's offer")
                await self.game.end(text, asked=True)  # 要不要再来一个？— 不要了: the game ends
                return
            said_aside = aside(text)  # 哥哥你猜是什么: said to someone else, not to the game
            if said_aside == "":
                self.trace.record("aside", game=decision.game_id)
                return
            await self.game.forward(said_aside or text)
            return
        elif decision.kind == "no_game":
            await self._say(NO_GAME)
            return
        await self._say(games_text(self.registry.games))
        self._listed = True

    async def _after_game(self, decision: Route, text: str) -> None:
        """Rounds after a game, vague picks, a bare 开始 or number: decided in code."""
        games = self.registry.games
        finished = self.game.finished
        how = decision.kind
        if decision.kind == "repeat":
            words = "".join(finished.words) if finished is not None else ""
            await self._say(words or NOTHING_TO_REPEAT)
            return
        if decision.kind == "random" and games:
            others = [g for g in games if finished is None or g.id != finished.client.info.id] or games
            decision = Route("start", self._rng.choice(others).id, why="picked at random")
        client = self.registry.get(decision.game_id) if decision.game_id else None
        if decision.kind == "number" and client is not None:
            again = finished is not None and finished.client.info.id == client.info.id
            await self._say((NUMBER_AGAIN if again else NUMBER_OFFER).format(name=client.info.name))
            self._host_offer = client.info.id
            return
        if client is None or decision.kind in ("which", "number"):
            await self._say(which_text(games))
            self._listed = True
            return
        self.trace.record("after_game_start", game=client.info.id, how=how, why=decision.why)
        await self.start_game(client, text)

    async def _ask_model(self, text: str, named: str, *, may_start: bool) -> None:
        """The model's turn (``MainChat.ask``) for what code could not tell; code takes
        over when it fails. ``named`` is the game the line names (the router's)."""

        async def run_tool(call: ToolCall) -> dict[str, Any] | None:
            return await self._run_tool(call, text, named)

        if not await self.chat.ask(text, self.current, may_start=may_start, run_tool=run_tool, say=self._say):
            await self._without_model(text, named)

    async def _without_model(self, text: str, named: str) -> None:
        """The model failed: a line that names a game at all (``named``) starts it; the
        rest is told."""
        client = self.registry.get(named) if named else None
        self.trace.record("model_fallback", game=named)
        if client is not None:
            await self.start_game(client, text)
        else:
            await self._say(MODEL_DOWN)

    async def _run_tool(self, call: ToolCall, text: str, named: str) -> dict[str, Any] | None:
        """Carry out the model's tool call: its result, or None when a game answered."""
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            args = {}
        if not isinstance(args, dict):
            args = {}
        if call.name == "list_games":
            return {"games": [_describe(g) for g in self.registry.games]}
        if call.name == "start_game":
            wanted = str(args.get("game_id", ""))
            client = self.registry.get(wanted) or self.registry.find(wanted) or self.registry.get(named)
            if client is None:
                return {"error": f"{NOT_FOUND}可以玩的游戏：{', '.join(g.id for g in self.registry.games)}"}
            await self.start_game(client, text)
            return None
        if call.name == "end_game":
            if self.current is None:
                await self._say(NO_GAME)
            else:
                await self.game.end(text, asked=True)
            return None
        if call.name == "send_message":
            await self.game.forward(text)
            return None
        return {"error": f"Unknown tool: {call.name}"}

    # -- the four game operations -----------------------------------------------------

    async def start_game(self, client: GameClient, text: str) -> None:
        """Start ``client``'s game with the user's words (``GameConversation.start``: a game
        that plays says its goodbye first); remembered as the main agent's ``start_game``.

        Idempotent: starting the game that already plays does nothing (a weak model called
        ``start_game`` twice and the second start revealed the first drawing's answer)."""
        if self.game.playing == client.info.id:
            self.trace.record("start_ignored", game=client.info.id, why="already playing")
            return
        await self.game.start(client, text)

    async def end_game(
        self, text: str, *, reason: Literal["user", "shutdown"] = "user", quiet: bool = False
    ) -> None:
        """Cancel what the game is working on and send ``end`` (``GameConversation.end``).

        Returns once the first reply to ``end`` was played. The game is forgotten (and the
        robot reset) only when the ``end`` request is over, after its last reply.
        ``quiet`` drops the game's replies, not its failure: that is always told.
        """
        await self.game.end(text, reason=reason, quiet=quiet)

    def interrupt(self) -> None:
        """Barge-in (a touch while the robot speaks): the turn in flight is cancelled.

        The same cancellation ``end`` starts with (the in-flight requests' cancel scopes),
        and what is still to be said is dropped (``OutputQueue.interrupt``); unlike
        ``end`` the game goes on and hears the next line.
        """
        current = self.current
        if current is not None:
            current.cancel()
        self.output.interrupt()
        self.trace.record("turn_cancelled", game=None if current is None else current.info.id)

    def fixed_lines(self) -> list[str]:
        """Lines this agent says in words code wrote, as they would be said now (the games'
        list, which game, a line not caught, a model that is down): a voice may synthesise
        them ahead."""
        games = self.registry.games
        return [games_text(games), which_text(games), WHICH_GAME, NOT_FOUND, CHAT_FALLBACK,
                MODEL_DOWN, NOTHING_TO_REPEAT]

    async def say(self, text: str) -> None:
        """Say the host's own words (the boot greeting); returns once they were played."""
        await self._say(text)

    async def wait_idle(self) -> None:
        """Wait until no game request is pending and everything queued was played."""
        await self.game.wait_idle()
        await self.output.drain()

    async def shutdown(self) -> None:
        """End a running game with reason ``shutdown`` (``/quit``, Ctrl-C, SIGTERM).

        Waits ``shutdown_grace`` seconds at most for the game's goodbye; a game that does
        not answer in time is forgotten anyway, and the robot's reset gets
        ``RESET_GRACE`` seconds to play.
        """
        with trio.move_on_after(self.shutdown_grace):
            if self.current is not None:
                with request_scope(uuid.uuid4().hex):
                    await self.end_game("", reason="shutdown")
            await self.wait_idle()
        self.game.abandon()
        with trio.move_on_after(RESET_GRACE):
            await self.output.drain()

    # -- the host's own words ---------------------------------------------------------

    def _say_wait(self) -> None:
        """Say "稍等" once per line, without waiting for it to be played."""
        if self._waited:
            return
        self._waited = True
        self.trace.record("patience", after=self.budgets.patience)
        with contextlib.suppress(RuntimeError):  # the queue stopped: nobody to tell
            self.output.put_nowait(GameReply(text=WAIT_TEXT), game=None)

    async def _say(self, text: str) -> None:
        text = clip_text(text) or CHAT_FALLBACK  # the main agent's replies obey the same 500
        await self.output.put(GameReply(text=text), game=None, after=self.chat.said(text))
        await self.output.drain()


def _describe(info: GameInfo) -> dict[str, Any]:
    return {"id": info.id, "name": info.name, "aliases": list(info.aliases), "description": info.description}
