"""The address the app declares for its first page opens it (every page opens in test_a11y_browser.py)."""

from tests.browser.conftest import goto


def test_the_declared_home_path_opens_the_first_page(page):
    """Issue 39 (3): /home, the path the app declares for its first page, opened a "Page not found" dialog."""
    goto(page, "home")
    page.get_by_role("heading", name="Speculative decoding: the idea").wait_for()
    assert page.get_by_text("Page not found").count() == 0
