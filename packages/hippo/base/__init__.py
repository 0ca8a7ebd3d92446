"""Layer 0: what every other layer may use. Errors, public value types, configuration, lifecycle policies,
input validation, the one readers-writer lock, growable columns and time helpers. Imports nothing else of hippo."""
