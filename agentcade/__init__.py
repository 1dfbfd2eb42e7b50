"""agentcade: the game host of the WatcheRobot desktop robot (小懒).

Game authors import from the stable modules the guide names: ``agentcade.skill``,
``agentcade.skill_agent``, ``agentcade.tools``, ``agentcade.effects``, ``agentcade.vector``
and ``agentcade.settings``.
"""

__version__ = "0.3.0"
