"""Voice in and out for ``agentcade run``: microphone -> voice detection -> ASR -> text, and
text -> TTS -> the robot's speaker, sentence by sentence (trio-native).

``settings.yaml`` beside this file declares every voice setting in the same format as a
game's ``settings.yaml``: the settings page renders it and ``agentcade run`` reads it.
"""
