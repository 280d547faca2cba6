"""An Esplora-like HTTP/1.1 server for the e2e tests and scripts/bench, run in a thread of the caller.

`GET /address/ADDR` answers Esplora's address summary: used (one confirmed transaction) for the addresses in
`used`, unused for the rest. For BDK's Esplora client it also answers `GET /scripthash/HASH/txs` (the
transactions in `txs`: script hash -> list of Esplora transaction objects, all in the mempool), `GET /blocks`
and `GET /block-height/H` over a made-up chain whose block 0 is Bitcoin's genesis block. It keeps connections alive (HTTP/1.1), counts the TCP connections it accepts and
the requests it answers, and can add a delay per request and per new connection (a distant server), so that
clients that reconnect for every request pay for it as they would over a network. Request targets may be in
absolute form (http://host:port/address/ADDR), as an HTTP proxy forwards them.
"""
import hashlib
import http.server
import json
import threading
import time
import urllib.parse


class EsploraTestServer:
    GENESIS = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
    TIP = 100

    def __init__(self, used=(), *, txs=None, delay_ms=0.0, connect_delay_ms=0.0):
        self.used = set(used)
        self.txs = dict(txs or {})
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
                parts = path.strip("/").split("/")
                with owner.lock:
                    owner.requests += 1
                if parts[0] == "address" and len(parts) == 2:
                    count = 1 if parts[1] in owner.used else 0
                    self.answer(json.dumps({"address": parts[1], "chain_stats": {"tx_count": count, "funded_txo_count": count},
                                            "mempool_stats": {"tx_count": 0, "funded_txo_count": 0}}))
                elif parts[0] == "scripthash" and len(parts) == 3 and parts[2] == "txs":
                    self.answer(json.dumps(owner.txs.get(parts[1], [])))
                elif parts[0] == "scripthash" and len(parts) >= 4:  # /txs/chain/LAST: no confirmed history
                    self.answer("[]")
                elif path == "/blocks":
                    self.answer(json.dumps([owner.block(h) for h in range(owner.TIP, owner.TIP - 10, -1)]))
                elif parts[0] == "block-height" and len(parts) == 2 and parts[1].isdigit() and int(parts[1]) <= owner.TIP:
                    self.answer(owner.block(int(parts[1]))["id"], "text/plain")
                else:
                    self.send_error(404)

            def answer(self, text, content_type="application/json"):
                body = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", content_type)
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

    def block(self, height):
        """A block summary of the made-up chain (Esplora's /blocks entries)."""
        def block_hash(h):
            return self.GENESIS if h == 0 else hashlib.sha256(b"keyhost made-up block %d" % h).hexdigest()
        return {"id": block_hash(height), "height": height, "version": 1, "timestamp": 1231006505 + 600 * height,
                "tx_count": 1, "size": 285, "weight": 1140, "merkle_root": "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b",
                "previousblockhash": block_hash(height - 1) if height > 0 else None, "mediantime": 1231006505 + 600 * height,
                "nonce": 0, "bits": 486604799, "difficulty": 1}

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
