"""The built-in games, one folder each (loaded by ``agentcade.game.loader``)."""
