"""海龟汤的配置：只有大模型的设置（主持和裁判用同一个模型）。"""

from agentcade.settings import AgentSettings


class Settings(AgentSettings):
    """Everything turtle soup reads (settings.yaml lists the keys)."""
