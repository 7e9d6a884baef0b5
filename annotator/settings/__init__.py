"""What may be set: the environment's settings and the allowed range of every number."""
