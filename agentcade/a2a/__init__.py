"""A2A on trio + h11: server, client, SSE, agent card."""
