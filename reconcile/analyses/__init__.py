"""What the store answers: costs, budgets, ceilings, usage, runs, summaries, projections, replay."""
