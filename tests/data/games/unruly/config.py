from agentcade.settings import AgentSettings


class Settings(AgentSettings):
    pass
