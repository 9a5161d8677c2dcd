"""Every page opens in a real browser without a Streamlit exception box."""

import pytest

from app.layout import all_pages
from tests.browser.conftest import assert_no_exception, goto, screenshot


@pytest.mark.parametrize("spec", all_pages(), ids=lambda p: p.url_path)
def test_page_opens(page, spec):
    goto(page, spec.url_path)
    assert page.locator("h1").first.inner_text().strip()
    assert_no_exception(page)
    screenshot(page, spec.url_path)


def test_the_declared_home_path_opens_the_first_page(page):
    """Issue 39 (3): /home, the path the app declares for its first page, opened a "Page not found" dialog."""
    goto(page, "home")
    page.get_by_role("heading", name="Speculative decoding: the idea").wait_for()
    assert page.get_by_text("Page not found").count() == 0
