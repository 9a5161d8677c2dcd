"""The two quiz pages (pages/knowledge_quiz.py, pages/sequence_quiz.py) and their URL."""
