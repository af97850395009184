"""Model prices: the genai-prices snapshot, reconcile's corrections, a team's own price files, repricing."""
