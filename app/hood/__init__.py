"""The Under-the-hood page (pages/under_the_hood.py): the mechanics of one iteration, drawn from a real run."""
