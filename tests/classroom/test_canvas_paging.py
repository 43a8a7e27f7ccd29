"""docs/instructors.md's command saves every page of Canvas's Submissions API, and collect reads them.

A local server answers as canvas-lms's `Api.paginate` does (lib/api.rb): at most `per_page`
submissions a page, the others named by the `Link` header (`<url>; rel="current",<url>;
rel="next",...`, page numbers in the query, access tokens never in it). The documented shell
loop runs against it as written, but for the server's address, the ids and the token.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from autograder.course.settings import REPO_ROOT
from tests.classroom.test_collect import A, make_zip, notebook, placed, run

DOCS = REPO_ROOT / "docs" / "instructors.md"
TOKEN = "7~not-a-real-token"
CLASS = 121  # 120 students and Canvas's test student: two pages of 100


def documented_command() -> str:
    """The bash block of docs/instructors.md that follows rel="next"."""
    blocks = re.findall(r"```bash\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    (block,) = [b for b in blocks if 'rel="next"' in b]
    return "\n".join(line for line in block.splitlines() if "autograder collect" not in line)


def submissions() -> list[dict]:
    return [{"id": 900 + n, "user_id": 5000 + n, "assignment_id": 4242,
             "submitted_at": f"2026-12-01T{n % 24:02d}:00:00Z", "cached_due_date": "2026-12-02T05:59:00Z",
             "attachments": [{"id": 70000 + n}]} for n in range(CLASS)]


class Canvas(BaseHTTPRequestHandler):
    """GET /api/v1/courses/1/assignments/4242/submissions, paged as canvas-lms pages it."""

    requests: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        type(self).requests.append(self.path)
        url = urlparse(self.path)
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.send_error(401)
            return
        if url.path != "/api/v1/courses/1/assignments/4242/submissions":
            self.send_error(404)
            return
        query = parse_qs(url.query)
        per_page = min(int(query.get("per_page", ["10"])[0]), 100)
        page = int(query.get("page", ["1"])[0])
        records = submissions()
        last = -(-len(records) // per_page)
        base = f"http://{self.headers['Host']}{url.path}?"
        links = {"current": page, "next": page + 1 if page < last else None,
                 "prev": page - 1 if page > 1 else None, "first": 1, "last": last}
        body = json.dumps(records[(page - 1) * per_page: page * per_page]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Link", ",".join(f'<{base}page={n}&per_page={per_page}>; rel="{rel}"'
                                          for rel, n in links.items() if n))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def canvas():
    Canvas.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Canvas)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.skipif(not (shutil.which("bash") and shutil.which("curl")), reason="needs bash and curl")
def test_the_documented_command_saves_every_page_and_collect_reads_them(canvas, fixture_course,
                                                                         tmp_path, capsys):
    command = (documented_command().replace("https://CANVAS", canvas)
               .replace("COURSE_ID", "1").replace("ASSIGNMENT_ID", "4242"))
    done = subprocess.run(["bash", "-euc", command], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "TOKEN": TOKEN}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Canvas.requests == ["/api/v1/courses/1/assignments/4242/submissions?per_page=100",
                               "/api/v1/courses/1/assignments/4242/submissions?page=2&per_page=100"]
    pages = sorted((tmp_path / "times").iterdir())
    assert [p.name for p in pages] == ["page-001.json", "page-002.json"]
    assert [len(json.loads(p.read_text())) for p in pages] == [100, 21]
    # The last student is on the second page: collect finds them in the folder.
    download = make_zip(tmp_path / "submissions.zip", {
        f"lovelaceada_5000_70000_{A}.ipynb": notebook("first page"),
        f"turingalan_LATE_5120_70120_{A}.ipynb": notebook("second page")})
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "canvas", "-a", A, "--out", out,
               "--times", tmp_path / "times") == 0
    files = placed(out)
    assert files[f"5120/{A}/timestamp.txt"] == b"2026-12-01 00:00:00.000000 UTC\n"
    assert files[f"5120/{A}/due.txt"] == b"2026-12-02 05:59:00.000000 UTC\n"
    assert "(2 with a submission time)" in capsys.readouterr().out
    # The first page alone: the message says what is missing.
    assert run(fixture_course, "collect", download, "--from", "canvas", "-a", A, "--out",
               tmp_path / "s2", "--times", pages[0]) == 2
    assert "may be one page of several" in capsys.readouterr().err


def test_the_documented_command_is_there():
    assert "rel=\"next\"" in documented_command() and "per_page=100" in documented_command()
    assert Path(DOCS).read_text(encoding="utf-8").count("lib/content_zipper.rb") >= 1
