"""The serving page (pages/serving.py): many requests at once, the roofline and the KV cache."""
