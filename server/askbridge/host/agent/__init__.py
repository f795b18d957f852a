"""A session and its turns: the turn loop, tools, model output checks, delegation, the model
adapters (models/), opening and unloading sessions, the late-reply handler (L1–L4) and the
calls of an agent that runs outside (external_sessions.py). Never imports asking/; the two meet in
host.py.
"""
