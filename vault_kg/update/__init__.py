"""The update route: the engine and its stages, the run's state and result, the one-note patches, ranking and the edge groups kept across runs."""
