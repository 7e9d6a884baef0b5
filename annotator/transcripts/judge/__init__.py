"""The judge: a response's class and verdict, answer equivalence, its workers, the LLM judge."""
