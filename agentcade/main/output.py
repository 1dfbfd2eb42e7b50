"""The output queue: replies are played one after another, directives before their text.

One task (``await nursery.start(queue.run)``) plays everything put into the queue, in
order, on one :class:`~agentcade.device.robots.Robot`:

* each reply's directives run in order, then its text is spoken — except a reaction's
  (``Directive.timing``): a directive marked ``with_text`` starts together with the text,
  which does not wait for it (the head shakes while the verdict is spoken; such directives
  run in order among themselves), and the directives after it run once the text has been
  said (the face stays until then, the communication design's 游戏 Agent section); after
  a barge-in those still run, briefly;
* a directive is re-validated first (``validate_directive`` against the game's declared
  capabilities: a remote game is untrusted); an invalid, undeclared or not-allowed one is
  skipped and traced ``directive_skipped``;
* a call that returns a Job is waited for, at most :data:`JOB_WAIT_LIMIT` seconds (the job
  keeps running past the cap); light effects (``lights.play_effect``) are not waited for,
  they may loop forever;
* once a reply is said, the lines it says the game may say next (``GameReply.ahead``) are
  synthesised ahead in the background by a robot that can (``VoiceRobot.prepare``);
* a device error (NACK, no reply, connection gone) is traced and the queue goes on;
* :meth:`OutputQueue.interrupt` (a barge-in) cancels the reply playing now and drops the
  replies queued before it (resets still run);
* while the robot is away (its ``away_reason`` is set: the Daemon socket closed, the device
  dropped, the link stalled — :class:`~agentcade.device.robots.SdkRobot`), directives are
  skipped at once and traced ``directive_skipped`` with kind ``robot_away``, instead of each
  waiting out a command timeout; the text is still spoken;
* :meth:`OutputQueue.reset_after_session` queues the reset of what a game used, so it
  happens after the game's last sentence: stop animation and behaviour, lights off, head
  to the front, screen to standby, each only if calls of that capability ran for the game
  since its last reset. Apart from that reset the host sends no screen commands: during a
  game the screen belongs to the game.

Trace records: ``directive_executed`` (call, directive, outcome, ms, game, remote;
outcome ``ok``/``started``/``completed``/``failed``/``cancelled``/``timeout``/``error``,
with ``error`` and ``reason`` for device errors), ``directive_skipped`` (kind, reason),
``spoken`` (text, ms), ``session_reset`` (game, calls), ``reply_interrupted`` and
``reply_dropped`` (text).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import trio

from agentcade.core import guard
from agentcade.core.allowlist import ALLOWED_CALLS, FRONT_PAN, FRONT_TILT, JOB_CALLS
from agentcade.core.protocol import Directive, GameReply
from agentcade.core.trace import NULL_TRACE, Trace, current_request_id, request_scope
from agentcade.device.robots import DeviceError, Robot
from agentcade.device.validate import DirectiveError, validate_directive
from agentcade.game.client import is_url

__all__ = [
    "JOB_WAIT_LIMIT",
    "NOT_WAITED",
    "RESET_MOVE_MS",
    "RESTORE_LIMIT",
    "GameLike",
    "OutputQueue",
    "reset_directives",
]

RESTORE_LIMIT = 1.0
"""How long, after a barge-in, the screen a reaction returns to may take to be put back."""

JOB_WAIT_LIMIT = 10.0
"""The longest the queue waits for one Job (the guide: 最多等 10 秒)."""

NOT_WAITED: frozenset[str] = frozenset({"lights.play_effect"})
"""Job calls the queue does not wait for: light effects may loop until stopped."""

RESET_MOVE_MS = 600
"""How long the head takes to turn back to the front after a game."""

_SCREEN_RESOURCES = frozenset(
    {"resource.expression.official", "resource.work.play", "resource.work.expression.play"}
)


class GameLike(Protocol):
    """What the queue needs of a game (``GameInfo`` fits)."""

    @property
    def id(self) -> str: ...

    @property
    def capabilities(self) -> Sequence[str]: ...


def reset_directives(capabilities: Collection[str]) -> list[Directive]:
    """The host's reset after a game that used these capabilities, in order.

    Only what the game changed: animation and behaviour stopped, lights off,
    head to the front (``FRONT_PAN``/``FRONT_TILT``), the screen back to standby
    (``expression_runtime.stop``; after official expressions or works, whose screens have
    no stop, the ``standby`` animation).
    """
    caps = set(capabilities)
    out: list[Directive] = []
    if "animation" in caps:
        out.append(Directive(call="animation.stop"))
    if "behavior" in caps:
        out.append(Directive(call="behavior.stop"))
    if "light" in caps:
        out.append(Directive(call="lights.off"))
    if "motion" in caps:
        out.append(Directive(call="motion.stop"))
        out.append(
            Directive(
                call="motion.move_to",
                kwargs={"pan_deg": FRONT_PAN, "tilt_deg": FRONT_TILT, "duration_ms": RESET_MOVE_MS},
            )
        )
    if "expression.runtime.v3" in caps:
        out.append(Directive(call="expression_runtime.stop"))
    if caps & _SCREEN_RESOURCES:
        out.append(Directive(call="animation.play", args=["standby"]))
    return out


@dataclass(eq=False)
class _Item:
    kind: Literal["reply", "reset"]
    game: GameLike | None
    remote: bool = False
    reply: GameReply | None = None
    after: Callable[[], None] | None = None
    """Called once the item has been played (the main agent writes history then)."""
    done: trio.Event = field(default_factory=trio.Event)
    request_id: str | None = field(default_factory=current_request_id)
    """The request that queued it: its records are grouped under the same id."""
    generation: int = 0
    """Replies queued before the last :meth:`OutputQueue.interrupt` are not played."""
    after_text: list[Directive] = field(default_factory=list)
    """The directives still to run once the text has been said (kept for a barge-in)."""


class OutputQueue:
    """Plays replies on a robot in order; see the module docstring.

    Args:
        robot: where directives run and text is spoken.
        trace: where records go.
        job_wait_limit: the cap on waiting for one Job (tests shorten it).
    """

    def __init__(
        self,
        robot: Robot,
        *,
        trace: Trace = NULL_TRACE,
        job_wait_limit: float = JOB_WAIT_LIMIT,
    ) -> None:
        self.robot = robot
        self._trace = trace
        self._job_wait_limit = job_wait_limit
        self._send, self._receive = trio.open_memory_channel[_Item](math.inf)
        self._last: _Item | None = None
        self._wording: set[_Item] = set()
        """Replies with words that have not all been said yet (queued or playing)."""
        self._running = False
        self._closed = False
        self._generation = 0
        self._playing: trio.CancelScope | None = None
        self._preparing: trio.CancelScope | None = None
        self._prepared = trio.Event()
        self._prepared.set()
        self._background: trio.Nursery
        self._used: dict[str, set[str]] = {}
        """Game id -> capabilities of the calls that ran for it since its last reset."""

    # -- producers -----------------------------------------------------------------------

    async def put(
        self,
        reply: GameReply,
        *,
        game: GameLike | None,
        remote: bool = False,
        after: Callable[[], None] | None = None,
    ) -> None:
        """Queue a reply; never blocks (the queue is unbounded: replies are few and small).

        ``game=None`` (the host's own words) may not carry directives: they are skipped as
        undeclared.

        Raises:
            RuntimeError: the queue has stopped.
        """
        await trio.lowlevel.checkpoint()
        self.put_nowait(reply, game=game, remote=remote, after=after)

    def put_nowait(
        self,
        reply: GameReply,
        *,
        game: GameLike | None,
        remote: bool = False,
        after: Callable[[], None] | None = None,
    ) -> None:
        """:meth:`put` without a checkpoint, for synchronous callers."""
        self._put(_Item("reply", game, remote, reply, after))

    def reset_after_session(self, game: GameLike) -> None:
        """Queue the reset of what ``game`` used in its session (after what is queued).

        What it used is what ran on the robot for it since its last reset; a game that ran
        nothing (a start that failed, a game that only talks) gets no reset at all.
        """
        self._put(_Item("reset", game))

    def interrupt(self) -> None:
        """Stop the reply playing now (its sound stops: ``speak`` is cancelled) and drop
        the replies still queued (traced ``reply_dropped``). Resets still run."""
        self._generation += 1
        if self._playing is not None:
            self._playing.cancel()

    def _put(self, item: _Item) -> None:
        if self._closed:
            raise RuntimeError("the output queue has stopped")
        item.generation = self._generation
        self._send.send_nowait(item)
        self._last = item
        if item.reply is not None and item.reply.text.strip():
            self._wording.add(item)

    async def drain(self) -> None:
        """Wait until everything queued so far has been played (or the queue stopped)."""
        last = self._last
        if last is not None:
            await last.done.wait()
        else:
            await trio.lowlevel.checkpoint()

    @property
    def idle(self) -> bool:
        """Whether everything queued has been played."""
        return self._last is None or self._last.done.is_set()

    @property
    def words_pending(self) -> bool:
        """Whether some words queued or playing have not all been said yet.

        What a child's voice talks over. A game drawing stroke by stroke queues replies with
        no words: the robot is silent then, and a line said over the drawing is the host's to
        answer (the game is still busy), not a barge-in that cancels the drawing.
        """
        return bool(self._wording)

    # -- the task ------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Play queued items until cancelled. Start with ``await nursery.start(queue.run)``."""
        if self._running or self._closed:
            raise RuntimeError("OutputQueue.run is already running or has stopped")
        self._running = True
        try:
            async with trio.open_nursery() as self._background:
                task_status.started()
                await self._play_all()
                self._background.cancel_scope.cancel()
        finally:
            self._wording.clear()
            self._closed = True
            self._send.close()
            # Nobody will play the rest: release whoever drains.
            while True:
                try:
                    self._receive.receive_nowait().done.set()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
            self._receive.close()

    async def _play_all(self) -> None:
        async for item in self._receive:
            try:
                with request_scope(item.request_id):
                    if item.kind == "reply" and item.generation < self._generation:
                        self._trace.record("reply_dropped", text=_text(item))
                        continue
                    with trio.CancelScope() as scope:
                        if item.kind == "reply":
                            self._playing = scope
                        await self._play(item)
                    self._playing = None
                    if scope.cancelled_caught:
                        self._trace.record("reply_interrupted", text=_text(item))
                        await self._restore(item)
                        continue
                if item.after is not None:
                    item.after()
            finally:
                self._wording.discard(item)
                item.done.set()

    async def _play(self, item: _Item) -> None:
        game = item.game
        if item.kind == "reset":
            assert game is not None
            calls = reset_directives(self._used.pop(game.id, set()))
            if not calls:
                return
            for directive in calls:
                # The standby animation may be the device's endless idle loop: not waited.
                wait = directive.call != "animation.play"
                await self._execute(directive, game, remote=False, reset=True, wait=wait)
            self._trace.record("session_reset", game=game.id, calls=[d.call for d in calls])
            return
        reply = item.reply
        assert reply is not None
        before, along, item.after_text = self._split(reply.directives, game, item.remote)
        for directive in before:
            await self._execute(directive, game, remote=item.remote)
        async with trio.open_nursery() as nursery:
            if along:
                nursery.start_soon(self._lane, along, game, item.remote)
            await self._say(reply.text, game)
        self._wording.discard(item)
        if reply.ahead:
            self._prepare(reply.ahead)
        after, item.after_text = item.after_text, []
        for directive in after:
            await self._execute(directive, game, remote=item.remote)

    def _prepare(self, lines: Sequence[str]) -> None:
        """Have the robot's voice synthesise ``lines`` ahead (``VoiceRobot.prepare``), in the
        background once the reply is said; lines given later replace those not done yet."""
        prepare = getattr(self.robot, "prepare", None)
        if prepare is None:
            return
        if self._preparing is not None:
            self._preparing.cancel()
        self._preparing = scope = trio.CancelScope()
        self._prepared = done = trio.Event()

        async def run() -> None:
            try:
                with scope:
                    await prepare(lines)
            finally:
                done.set()

        self._background.start_soon(run)

    async def wait_prepared(self) -> None:
        """Wait until the lines given ahead so far are synthesised (or given up for newer)."""
        await self._prepared.wait()

    def _split(
        self, directives: Sequence[Directive], game: GameLike | None, remote: bool
    ) -> tuple[list[Directive], list[Directive], list[Directive]]:
        """(before the text, along with it, after it): the valid directives of a reply.

        Up to the first ``with_text`` directive everything runs before the text (the
        guide's order); from there the ``with_text`` ones run along with the text and all
        the others once it has been said, each part in its own order.
        """
        before: list[Directive] = []
        along: list[Directive] = []
        after: list[Directive] = []
        for directive in directives:
            try:
                validate_directive(directive, game.capabilities if game is not None else ())
            except DirectiveError as exc:
                self._trace.record(
                    "directive_skipped",
                    call=directive.call,
                    directive=directive.describe(),
                    kind=exc.kind,
                    reason=exc.reason,
                    game=game.id if game is not None else None,
                    remote=remote,
                )
                continue
            if directive.timing == "with_text":
                along.append(directive)
            elif along or after or directive.timing == "after_text":
                after.append(directive)
            else:
                before.append(directive)
        return before, along, after

    async def _lane(self, directives: list[Directive], game: GameLike | None, remote: bool) -> None:
        """Run the ``with_text`` directives in order while the text is spoken (a gesture's
        moves wait for each other, the sentence waits for none of them)."""
        for directive in directives:
            await self._execute(directive, game, remote=remote)

    async def _say(self, text: str, game: GameLike | None) -> None:
        if not text.strip():
            await trio.lowlevel.checkpoint()
            return
        hit = guard.screen(text, host=game is None)
        if hit is not None:
            # Whoever wrote it (a remote game, anyone's model), it is never said to a child.
            self._trace.record(
                "guard",
                kind=hit.kind,
                topic=hit.topic,
                reason=hit.reason,
                text=text,
                game=game.id if game is not None else None,
                remote=is_url(getattr(game, "location", "")),
            )
            text = guard.neutral_line(in_game=game is not None)
        started = trio.current_time()
        try:
            await self.robot.speak(text)
        except DeviceError as exc:
            self._trace.record("speech_failed", text=text, reason=str(exc))
            return
        self._trace.record(
            "spoken", text=text, game=game.id if game is not None else None, ms=_ms(started)
        )

    async def _restore(self, item: _Item) -> None:
        """After a barge-in: still run what was to come after the text (the screen a
        reaction returns to), briefly and without waiting for Jobs, so no face is left."""
        after, item.after_text = item.after_text, []
        if not after:
            return
        with trio.move_on_after(RESTORE_LIMIT):
            for directive in after:
                await self._execute(directive, item.game, remote=item.remote, wait=False)

    async def _execute(
        self,
        directive: Directive,
        game: GameLike | None,
        *,
        remote: bool,
        reset: bool = False,
        wait: bool = True,
    ) -> None:
        started = trio.current_time()
        fields: dict[str, object] = {
            "call": directive.call,
            "directive": directive.describe(),
            "game": game.id if game is not None else None,
            "remote": remote,
        }
        if reset:
            fields["reset"] = True
        away = getattr(self.robot, "away_reason", None)
        if away is not None:
            await trio.lowlevel.checkpoint()
            self._trace.record("directive_skipped", **fields, kind="robot_away", reason=away)
            return
        if game is not None and not reset:
            self._used.setdefault(game.id, set()).add(ALLOWED_CALLS[directive.call])
        try:
            handle = await self.robot.execute(directive)
            if handle is None:
                outcome = "ok"
            elif not wait or directive.call in NOT_WAITED or directive.call not in JOB_CALLS:
                outcome = "started"
            else:
                outcome = await self.robot.wait_job(handle, self._job_wait_limit)
                reason = getattr(handle, "reason", None)
                if outcome in ("failed", "cancelled") and isinstance(reason, str):
                    fields["reason"] = reason
        except DeviceError as exc:
            self._trace.record(
                "directive_executed",
                **fields,
                outcome="error",
                error=exc.kind,
                reason=exc.reason,
                ms=_ms(started),
            )
            return
        self._trace.record("directive_executed", **fields, outcome=outcome, ms=_ms(started))


def _text(item: _Item) -> str:
    return item.reply.text if item.reply is not None else ""


def _ms(started: float) -> int:
    return round((trio.current_time() - started) * 1000)
