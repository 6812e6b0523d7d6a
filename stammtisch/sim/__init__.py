"""Simulation: many deals with bots, summaries, records."""

from .simulate import SimulationSummary, play_deal, simulate

__all__ = ["SimulationSummary", "play_deal", "simulate"]
