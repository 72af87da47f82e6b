"""`skillet demo`: the main job end to end on local services, with a readable transcript."""
