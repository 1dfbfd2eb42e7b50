"""猜数字的配置。"""

from agentcade.settings import AgentSettings


class Settings(AgentSettings):
    """Everything the number game reads (settings.yaml lists the keys)."""
