"""Open-world tasks: long-horizon, multi-app tasks over the pool, with explicit constraints and a checklist.

`model.py` is the task-set format every producer (the task creation engine) and consumer (the open-world
benchmark, its agents, the RL environment) shares.
"""
