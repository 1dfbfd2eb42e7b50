"""Game runtime: Turn, game loading and GameHost sessions."""
