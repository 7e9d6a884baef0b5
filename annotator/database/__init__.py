"""The database: engine and sessions, the models, queries, light tables, raw rows, the stored words and names."""
