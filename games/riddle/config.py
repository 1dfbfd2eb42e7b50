"""猜谜语的配置：只有大模型的设置。"""

from agentcade.settings import AgentSettings


class Settings(AgentSettings):
    """Everything the riddle game reads (settings.yaml lists the keys)."""
