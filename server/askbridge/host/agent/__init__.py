"""A session and its turns: the turn loop, tools, model output checks, delegation and the
model adapters (models/). Never imports asking/; the two meet in host.py.
"""
