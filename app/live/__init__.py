"""The live page (pages/live.py): its settings and URL, the run, the replay, Be the draft."""
