"""agentcade: the game host of the WatcheRobot desktop robot (小懒).

Game authors import from the stable modules the guide names: ``agentcade.core.skill``,
``agentcade.game.skill_agent``, ``agentcade.core.tools``, ``agentcade.device.effects``, ``agentcade.core.vector``
and ``agentcade.core.settings``.
"""

__version__ = "0.3.0"
