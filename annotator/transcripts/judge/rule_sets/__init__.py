"""The judge's rule sets: how each classifies a response's final answer. `registry` is the one list of them; each
module here declares one (`RULE_SET`)."""
