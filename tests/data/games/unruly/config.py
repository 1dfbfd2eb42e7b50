from agentcade.core.settings import AgentSettings


class Settings(AgentSettings):
    pass
