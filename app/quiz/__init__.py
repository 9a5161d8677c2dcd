"""The two quiz pages (pages/quiz.py, pages/sequence.py) and their URL."""
