"""Labelling: labels and their writer, the annotator's queue, adjudication, gold items, browsing, Excel batches."""
