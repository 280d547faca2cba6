"""A local Esplora-like server for scripts/bench: every /address/X answers "unused" after a fixed delay.

    python3 slow_esplora.py [delay_ms=20]   -> prints the port on the first line, serves until killed
"""
import http.server
import json
import sys
import time

delay = (float(sys.argv[1]) if len(sys.argv) > 1 else 20.0) / 1000


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes: without this, delayed ACKs add 40 ms

    def do_GET(self):
        time.sleep(delay)
        address = self.path.rsplit("/", 1)[-1]
        body = json.dumps({"address": address, "chain_stats": {"tx_count": 0}, "mempool_stats": {"tx_count": 0}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
