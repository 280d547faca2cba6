"""An Esplora-like HTTP/1.1 server for the e2e tests and scripts/bench, run in a thread of the caller.

`GET /address/ADDR` answers Esplora's address summary: used (one confirmed transaction) for the addresses in
`used`, unused for the rest. It keeps connections alive (HTTP/1.1), counts the TCP connections it accepts and
the requests it answers, and can add a delay per request and per new connection (a distant server), so that
clients that reconnect for every request pay for it as they would over a network. Request targets may be in
absolute form (http://host:port/address/ADDR), as an HTTP proxy forwards them.
"""
import http.server
import json
import threading
import time
import urllib.parse


class EsploraTestServer:
    def __init__(self, used=(), *, delay_ms=0.0, connect_delay_ms=0.0):
        self.used = set(used)
        self.delay = delay_ms / 1000
        self.connect_delay = connect_delay_ms / 1000
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = 0
        self.port = None
        self._server = None
        self._thread = None

    def start(self):
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: without this, delayed ACKs add 40 ms

            def setup(self):
                super().setup()
                with owner.lock:
                    owner.connections += 1
                time.sleep(owner.connect_delay)

            def do_GET(self):
                time.sleep(owner.delay)
                path = urllib.parse.urlsplit(self.path).path
                if not path.startswith("/address/"):
                    self.send_error(404)
                    return
                address = path.rsplit("/", 1)[-1]
                count = 1 if address in owner.used else 0
                with owner.lock:
                    owner.requests += 1
                body = json.dumps({"address": address, "chain_stats": {"tx_count": count, "funded_txo_count": count},
                                   "mempool_stats": {"tx_count": 0, "funded_txo_count": 0}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self.port

    def stop(self):
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def stats(self):
        with self.lock:
            return {"connections": self.connections, "requests": self.requests}


if __name__ == "__main__":
    # python3 esplora_server.py [delay_ms] [connect_delay_ms]: prints the port, serves until killed (scripts/bench).
    import sys
    server = EsploraTestServer(delay_ms=float(sys.argv[1]) if len(sys.argv) > 1 else 0,
                               connect_delay_ms=float(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(server.start(), flush=True)
    threading.Event().wait()
