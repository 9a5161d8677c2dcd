"""`make class` (issue 40): scripts/classroom.py's nginx configuration. The class itself (Redis, workers, replicas
behind nginx, all real processes) is exercised in tests/browser/test_class_browser.py, which shares one class among
its tests."""

from __future__ import annotations

import importlib.util
import sys

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("specsim_classroom", ROOT / "scripts" / "classroom.py")
classroom = sys.modules.setdefault("specsim_classroom", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(classroom)


def test_the_nginx_configuration_is_sticky_and_passes_websockets(tmp_path):
    conf = classroom.nginx_conf(8501, [9001, 9002], tmp_path)
    assert "hash $remote_addr$http_user_agent consistent;" in conf
    assert "server 127.0.0.1:9001;" in conf and "server 127.0.0.1:9002;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf and "listen 127.0.0.1:8501;" in conf
    assert "listen 0.0.0.0:8501;" in classroom.nginx_conf(8501, [9001], tmp_path, public=True)
    assert f"pid {tmp_path}/nginx.pid;" in conf  # everything it writes stays in the class's own folder
