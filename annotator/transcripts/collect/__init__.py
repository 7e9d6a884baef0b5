"""Collecting transcripts: evaluate runs asking a model, prompts, storing transcripts made elsewhere."""
