"""The main agent: registry, output queue, robots."""
