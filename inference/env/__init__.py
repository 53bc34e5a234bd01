"""An RL environment over Gecko sessions: tool schemas are the action space, simulated execution gives the
observations, the checklist judge gives the reward.

`spec` (EpisodeSpec, RewardConfig, actions), `episode` (GeckoEpisode: async reset/step/fork/close over one
session), `rollout` (many episodes at once, scripted and OpenAI-compatible policies), `gym` (the
`gymnasium.Env`, imported on demand: it needs the `env` extra). README.md next to this file has the details.
"""

from inference.env.episode import CatalogCache, EpisodeError, GeckoEpisode, final_reward
from inference.env.rollout import (
    EpisodeResult,
    openai_policy,
    run_episode,
    run_episodes,
    scripted_policy,
    summarize,
)
from inference.env.spec import Action, EpisodeSpec, RewardConfig, ToolCallAction, parse_action

__all__ = [
    "Action", "CatalogCache", "EpisodeError", "EpisodeResult", "EpisodeSpec", "GeckoEpisode", "RewardConfig", "ToolCallAction",
    "final_reward", "openai_policy", "parse_action", "run_episode", "run_episodes", "scripted_policy", "summarize",
]
