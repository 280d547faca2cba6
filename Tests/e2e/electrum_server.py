"""A small Electrum protocol server for the discovery tests and scripts/bench: newline-delimited JSON-RPC 2.0
over TCP or TLS, the subset a wallet scan needs, a made-up history, and counts of what clients did.

Speaks: server.version, server.ping, blockchain.scripthash.get_history, blockchain.transaction.get,
blockchain.headers.subscribe, blockchain.block.header(s) (a chain of one block, the genesis block, so that BDK's
full_scan has a tip to connect), batches (JSON arrays, answered in shuffled order) and pipelined single requests
(answered in reverse order when several arrive together), as electrs, Fulcrum and ElectrumX do.

Misbehaviours on request, modelled on real servers: refusing batches with one error object (Fulcrum with
max_batch = 0), closing the connection on any batch (Blockstream's electrs), closing in the middle of the first
batch answers, error objects for chosen script hashes, an endless line, a line that is not JSON, an old protocol
version.

Counts: connections, connections open at once, request messages (round trips: a batch is one), batches and the
largest, single requests, calls per method.

Standalone (scripts/bench): python3 electrum_server.py HISTORY.json STATS.json -> prints the port, serves until
SIGTERM, then writes the counts to STATS.json. HISTORY.json maps script hashes to lists of
{"tx_hash", "height"} entries.
"""
import asyncio
import collections
import json
import os
import random
import signal
import ssl
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from threaded_asyncio import ThreadedAsyncioServer  # noqa: E402

# The Bitcoin genesis block header: the whole chain this server knows.
GENESIS = ("0100000000000000000000000000000000000000000000000000000000000000000000003ba3edfd7a7b12b27ac72c3e67768f617fc81bc388"
           "8a51323a9fb8aa4b1e5e4a29ab5f49ffff001d1dac2b7c")
LINE_LIMIT = 64 << 20


class ElectrumTestServer(ThreadedAsyncioServer):
    def __init__(self, histories=None, transactions=None, *, certfile=None, keyfile=None, protocol="1.4",
                 batches="answer", close_first_batches=0, errors=None, huge_line=0, garbage=False, ping_flag=None):
        super().__init__()
        self.limit = LINE_LIMIT
        self.histories = histories or {}        # script hash -> [{"tx_hash", "height", ...}]
        self.transactions = transactions or {}  # txid -> raw hex
        self.protocol = protocol                # what server.version answers
        self.batches = batches                  # "answer", "refuse" (one error object) or "close"
        self.close_first_batches = close_first_batches  # the first N batches: half an answer, then close
        self.errors = errors or {}              # script hash -> error object answered for it
        self.huge_line = huge_line              # > 0: get_history answers a line this long (no newline in reach)
        self.garbage = garbage                  # get_history answers a line that is not JSON
        self.ping_flag = ping_flag              # a file created when a server.ping arrives
        self.ssl_context = None
        if certfile:
            self.ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ssl_context.load_cert_chain(certfile, keyfile)
        self.lock = threading.Lock()
        self.connections = 0
        self.open = 0
        self.max_open = 0
        self.messages = 0
        self.batch_messages = 0
        self.largest_batch = 0
        self.single_messages = 0
        self.calls = collections.Counter()
        self.scripthash_calls = collections.Counter()  # get_history calls per script hash
        self.message_times = []                         # time.monotonic() of every request message
        self.clients = []
        self._closed_batches = 0
        self._random = random.Random(7)

    def stats(self):
        with self.lock:
            return {"connections": self.connections, "max_open": self.max_open, "round_trips": self.messages,
                    "batches": self.batch_messages, "largest_batch": self.largest_batch, "singles": self.single_messages, "calls": dict(self.calls),
                    "clients": list(self.clients)}

    # ------------------------------------------------------------------ serving

    async def _serve(self, reader, writer):
        with self.lock:
            self.connections += 1
            self.open += 1
            self.max_open = max(self.max_open, self.open)
        try:
            while True:
                lines = [await reader.readline()]
                if not lines[0]:
                    return
                # Requests that arrived together (pipelined) are answered last first: clients match by id.
                while b"\n" in reader._buffer:
                    lines.append(await reader.readline())
                answers = []
                for line in lines:
                    if not line.strip():
                        continue
                    answer = self._answer(line)
                    if answer == "close":
                        return
                    if isinstance(answer, tuple):  # ("half", bytes): half an answer, then close
                        writer.write(answer[1][: len(answer[1]) // 2])
                        await writer.drain()
                        return
                    answers.append(answer)
                for answer in reversed(answers):
                    writer.write(answer)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            return
        finally:
            with self.lock:
                self.open -= 1
            writer.close()

    def _answer(self, line):
        with self.lock:
            self.messages += 1
            self.message_times.append(time.monotonic())
        try:
            message = json.loads(line)
        except ValueError:
            return self._line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        if isinstance(message, list):
            with self.lock:
                self.batch_messages += 1
                self.largest_batch = max(self.largest_batch, len(message))
                for call in message:
                    self.calls[call.get("method")] += 1
                closing = self._closed_batches < self.close_first_batches
                if closing:
                    self._closed_batches += 1
            if self.batches == "close":
                return "close"
            if self.batches == "refuse":
                return self._line({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request"}})
            items = [self._respond(call) for call in message]
            if any(item is None for item in items):
                return self._special()
            self._random.shuffle(items)
            body = self._line(items)
            return ("half", body) if closing else body
        with self.lock:
            self.single_messages += 1
            self.calls[message.get("method")] += 1
        item = self._respond(message)
        return self._special() if item is None else self._line(item)

    def _special(self):
        """The misbehaving answer to get_history: an endless line, or one that is not JSON."""
        if self.huge_line:
            return b'{"jsonrpc": "2.0", "id": 0, "result": "' + b"a" * self.huge_line + b'"}\n'
        return b"this is not JSON {\n"

    @staticmethod
    def _line(value):
        return json.dumps(value, separators=(",", ":")).encode() + b"\n"

    def _respond(self, call):
        method, params, ident = call.get("method"), call.get("params") or [], call.get("id")

        def result(value):
            return {"jsonrpc": "2.0", "id": ident, "result": value}

        def error(code, text):
            return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": text}}

        if method == "server.version":
            with self.lock:
                self.clients.append(params[:2])
            return result(["keyhost-test-electrum 1.0", self.protocol])
        if method == "server.ping":
            if self.ping_flag:
                open(self.ping_flag, "w").close()
            return result(None)
        if method == "blockchain.scripthash.get_history":
            scripthash = params[0] if params else ""
            with self.lock:
                self.scripthash_calls[scripthash] += 1
            if scripthash in self.errors:
                return {"jsonrpc": "2.0", "id": ident, "error": self.errors[scripthash]}
            if self.huge_line or self.garbage:
                return None
            return result(self.histories.get(scripthash, []))
        if method == "blockchain.transaction.get":
            raw = self.transactions.get(params[0] if params else "")
            return result(raw) if raw else error(2, "No such mempool or blockchain transaction")
        if method == "blockchain.headers.subscribe":
            return result({"height": 0, "hex": GENESIS})
        if method == "blockchain.block.header":
            return result(GENESIS) if params and params[0] == 0 else error(1, "height out of range")
        if method == "blockchain.block.headers":
            start, count = (params + [0, 0])[:2]
            return result({"count": 1 if start == 0 and count > 0 else 0, "hex": GENESIS if start == 0 and count > 0 else "",
                           "max": 2016})
        return error(-32601, f"unknown method {method!r}")


def main():
    histories = json.load(open(sys.argv[1]))
    server = ElectrumTestServer(histories)
    port = server.start()
    print(port, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    done.wait()
    server.stop()
    with open(sys.argv[2], "w") as out:
        json.dump(server.stats(), out)
    os._exit(0)


if __name__ == "__main__":
    main()
