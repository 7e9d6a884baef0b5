"""The report: Precision and Prudence, their intervals, the judges' agreement, items models disagree on."""
