"""A quiet HTTP handler that answers 200 "ok", for tests that run real clients against a local server."""

from http.server import BaseHTTPRequestHandler


class AnswersOk(BaseHTTPRequestHandler):
    def answer_ok(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args) -> None:
        pass
