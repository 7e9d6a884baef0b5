"""Accounts: people and system annotators, passwords, sign-ins and their throttle, roles' capabilities."""
