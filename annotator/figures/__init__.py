"""Figures: the slow pages' figures, their fingerprints and shared snapshots, dataset statistics, agreement."""
