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
