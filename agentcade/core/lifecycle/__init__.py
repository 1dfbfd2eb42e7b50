"""The four lifecycles as sans-IO state machines (h11's ``_state.py``).

Each module holds one machine: its states and events as enums, one literal
``TRANSITIONS`` table (``{state: {event: next_state}}``) and a "Theory of operation". The
trio classes that own the I/O are thin drivers: they feed events and branch on ``state``.
An illegal event raises ``LocalIllegalTransition`` (a driver's bug) and leaves the state
as it was; ``check_remote`` turns a peer's request into ``RemoteIllegalTransition``.

* ``a2a_task``: an A2A task (``agentcade.a2a.tasks``, the A2A server).
* ``game_session``: a game session in ``agentcade.game.host.GameHost``.
* ``current_game``: the main agent's current game (``agentcade.main.conversation``).
* ``robot_link``: the link to a real robot (``agentcade.device.robots.SdkRobot``).
"""

from agentcade.core.lifecycle._machine import Lifecycle
from agentcade.core.lifecycle.a2a_task import TaskEvent, TaskLifecycle, TaskState
from agentcade.core.lifecycle.current_game import CurrentEvent, CurrentGame, CurrentState
from agentcade.core.lifecycle.game_session import GameSession, SessionEvent, SessionState
from agentcade.core.lifecycle.robot_link import LinkEvent, LinkState, RobotLink

__all__ = [
    "CurrentEvent",
    "CurrentGame",
    "CurrentState",
    "GameSession",
    "Lifecycle",
    "LinkEvent",
    "LinkState",
    "RobotLink",
    "SessionEvent",
    "SessionState",
    "TaskEvent",
    "TaskLifecycle",
    "TaskState",
]
