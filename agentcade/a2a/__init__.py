"""A2A on trio + h11: server, client, SSE, agent card.

Modules (sans-IO first):

* ``card``     -- ``build_card(skill, url)`` / ``read_card(json) -> CardInfo``, ``CardError``
* ``jsonrpc``  -- JSON-RPC 2.0 envelopes and errors exactly as a2a-sdk 1.3 answers them
* ``sse``      -- SSE frames out, ``SSEDecoder`` in
* ``wire``     -- A2A ProtoJSON pieces for GameInput/GameReply (DataPart + plain-text door)
* ``tasks``    -- task records: running ones + the last 64 finished (GetTask/CancelTask)
* ``handler``  -- ``GameHandler`` / ``ReplySink`` / ``SessionAware``: what the server serves
* ``server``   -- ``serve_a2a`` / ``A2AServer.handle_connection``, ``ServerLimits``
* ``client``   -- ``A2AClient`` (``fetch_card``, ``stream``, ``send``), ``GameRemoteError``

Not here: ``H11Stream``, the only h11 <-> trio glue, is ``agentcade.net._http``; the main
agent's remote game client, built on ``client``, is ``agentcade.wiring.remote`` (it opens
games, which the A2A layer never does).
"""
