"""The app shell: every page in the navigation renders without an exception."""

import pytest

from app.layout import all_pages
from tests.conftest import open_page


def test_home_is_default_and_renders():
    at = open_page()
    assert not at.exception
    assert at.title


@pytest.mark.parametrize("page", [p.script for p in all_pages()])
def test_every_page_renders(page):
    at = open_page(page)
    assert not at.exception, at.exception
    assert at.title
