"""What a run will cost and when to stop: the plan, target-width designs, sequential runs."""
