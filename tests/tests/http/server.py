"""HTTP test server for the uri and get_url comparisons: fixed answers per path
(status codes, redirects, headers, JSON, cookies, Basic authentication, gzip,
Content-Disposition, an echo of the request), on three ports of 127.0.0.1 (HTTP,
a second HTTP port to redirect to, HTTPS with the given certificate). Writes
`PORT OTHER TLS` to the file named by argv[1] once listening."""

import gzip
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTS = {}


class Handler(BaseHTTPRequestHandler):
    server_version = "TestServer/1.0"
    sys_version = ""

    def log_message(self, *args):
        pass

    def version_string(self):
        return self.server_version

    def send(self, status, body=b"", ctype="text/plain", headers=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def route(self):
        path = self.path.split("?")[0]
        if path == "/text":
            return self.send(200, b"hello\n")
        if path == "/json":
            return self.send(200, b'{"a": 1, "b": [1, 2], "c": {"d": null}}', "application/json")
        if path == "/vnd":
            return self.send(200, b'{"x": true}', "application/vnd.api+json; charset=utf-8")
        if path == "/notjson":
            return self.send(200, b"{not json", "application/json")
        if path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            return self.send(code, b"status body\n", headers=[("X-Code", str(code))])
        if path == "/redirect":
            return self.send(302, b"", headers=[("Location", "/json")])
        if path == "/redirect-rel":
            return self.send(301, b"", headers=[("Location", "text")])
        if path == "/redirect307":
            return self.send(307, b"", headers=[("Location", "/echo")])
        if path == "/redirect-loop":
            return self.send(302, b"", headers=[("Location", "/redirect-loop")])
        if path == "/redirect-other":
            other = "http://127.0.0.1:%d/json" % PORTS["other"]
            return self.send(302, b"", headers=[("Location", other)])
        if path == "/echo":
            seen = {k.lower(): v for k, v in self.headers.items()
                    if k.lower() in ("content-type", "x-test", "authorization", "user-agent",
                                     "cookie", "cache-control", "x-drop")}
            out = {"method": self.command, "path": self.path,
                   "body": self.body().decode("utf-8", "replace"), "headers": seen}
            return self.send(200, json.dumps(out, sort_keys=True).encode(), "application/json")
        if path == "/cookies":
            return self.send(200, b"ok", headers=[("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=two; Path=/")])
        if path == "/cookie-redirect":
            return self.send(302, b"", headers=[("Set-Cookie", "r=3; Path=/"), ("Location", "/echo")])
        if path == "/auth":
            if self.headers.get("Authorization") == "Basic dXNlcjpwYXNz":
                return self.send(200, b"welcome")
            return self.send(401, b"who are you", headers=[("WWW-Authenticate", 'Basic realm="test"')])
        if path == "/gzip":
            return self.send(200, gzip.compress(b"compressed text\n", mtime=0), headers=[("Content-Encoding", "gzip")])
        if path == "/latin1":
            return self.send(200, "caf\u00e9".encode("latin-1"), "text/plain; charset=ISO-8859-1")
        if path == "/disposition":
            return self.send(200, b"named content\n", "application/octet-stream",
                             headers=[("Content-Disposition", 'attachment; filename="named.txt"')])
        if path == "/files/data.bin":
            return self.send(200, bytes(range(256)) * 4, "application/octet-stream")
        if path == "/files/sha256sums":
            import hashlib
            digest = hashlib.sha256(bytes(range(256)) * 4).hexdigest()
            return self.send(200, ("%s  data.bin\n%s  other.bin\n" % (digest, "0" * 64)).encode())
        if path == "/slow":
            time.sleep(3)
            return self.send(200, b"late")
        if path == "/nolength":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"no length given\n")
            return None
        return self.send(404, b"no such page\n")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = route


def serve(server):
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()


def main():
    main_server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    other = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tls = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    PORTS["main"] = main_server.server_address[1]
    PORTS["other"] = other.server_address[1]
    PORTS["tls"] = tls.server_address[1]
    for s in (main_server, other, tls):
        serve(s)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write("%d %d %d\n" % (PORTS["main"], PORTS["other"], PORTS["tls"]))
    import os
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(3600)


main()
