"""你画我猜的配置：只有大模型的设置。"""

from agentcade.settings import AgentSettings


class Settings(AgentSettings):
    """Everything the draw_guess game reads (settings.yaml lists the keys)."""
