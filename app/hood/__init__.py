"""The Under-the-hood page (pages/hood.py): the mechanics of one iteration, drawn from a real run."""
