"""A SOCKS5 (RFC 1928/1929) and HTTP CONNECT proxy for the proxy tests, run in a thread of the test process.

It resolves names itself, from a table only (`names`: "esplora.invalid" -> "127.0.0.1"), never through DNS, so a
host name that does not resolve on this machine reaches its server only through the proxy. It records every
tunnel asked for (kind, address type, host, port, user name) and counts connections, so a test can show what
went through it and compare with what the servers saw.

    proxy = TestProxy({"esplora.invalid": "127.0.0.1"}, auth=("user", "secret"))
    port = proxy.start(); ...; proxy.tunnels; proxy.stop()
"""
import asyncio
import threading

from threaded_asyncio import ThreadedAsyncioServer


class TestProxy(ThreadedAsyncioServer):
    __test__ = False  # a helper, not a pytest test class
    def __init__(self, names=None, *, auth=None):
        super().__init__()
        self.names = dict(names or {})  # host name -> IP address the proxy connects to
        self.auth = auth                # (user, password) required, or None: no authentication
        self.lock = threading.Lock()
        self.connections = 0
        self.tunnels = []               # {"kind", "atyp", "host", "port", "user"}
        self.refusals = []              # why a connection was refused

    def hosts(self):
        with self.lock:
            return [tunnel["host"] for tunnel in self.tunnels]

    # ------------------------------------------------------------------ serving

    def _refuse(self, why):
        with self.lock:
            self.refusals.append(why)

    async def _serve(self, reader, writer):
        with self.lock:
            self.connections += 1
        try:
            first = await reader.readexactly(1)
            if first == b"\x05":
                target = await self._socks5(reader, writer)
            else:
                target = await self._connect(first, reader, writer)
            if target is None:
                return
            upstream_reader, upstream_writer = target
            await asyncio.gather(self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _pipe(self, reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            try:
                writer.write_eof()
            except (OSError, RuntimeError):
                pass

    def _address(self, host):
        """The IP the proxy connects to for `host`: from the table, or the host itself when it is an IP literal."""
        if host in self.names:
            return self.names[host]
        parts = host.split(".")
        if len(parts) == 4 and all(p.isdigit() for p in parts) or ":" in host:
            return host
        return None

    async def _socks5(self, reader, writer):
        count = (await reader.readexactly(1))[0]
        methods = await reader.readexactly(count)
        # As Tor: user name and password when offered (they choose the circuit), else none unless required.
        wanted = 0x02 if self.auth or 0x02 in methods else 0x00
        if wanted not in methods:
            self._refuse(f"methods {list(methods)}")
            writer.write(b"\x05\xff")
            await writer.drain()
            return None
        writer.write(bytes([0x05, wanted]))
        await writer.drain()
        user = None
        if wanted == 0x02:
            version = (await reader.readexactly(1))[0]
            user = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            password = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
            ok = version == 1 and (self.auth is None or (user, password) == self.auth)
            writer.write(b"\x01" + (b"\x00" if ok else b"\x01"))
            await writer.drain()
            if not ok:
                self._refuse(f"credentials of {user}")
                return None
        version, command, _, atyp = await reader.readexactly(4)
        if atyp == 0x01:
            host = ".".join(str(b) for b in await reader.readexactly(4))
        elif atyp == 0x04:
            raw = await reader.readexactly(16)
            host = ":".join(raw[i:i + 2].hex() for i in range(0, 16, 2))
        elif atyp == 0x03:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        else:
            return None
        port = int.from_bytes(await reader.readexactly(2), "big")
        with self.lock:
            self.tunnels.append({"kind": "socks5", "atyp": {1: "ipv4", 3: "domain", 4: "ipv6"}[atyp], "host": host,
                                 "port": port, "user": user})
        address = self._address(host)
        reply = 0x00 if version == 5 and command == 1 else 0x07
        upstream = None
        if reply == 0 and address is None:
            reply = 0x04  # host unreachable: a name the table does not know
        if reply == 0:
            try:
                upstream = await asyncio.open_connection(address, port)
            except OSError:
                reply = 0x05
        writer.write(bytes([0x05, reply, 0x00, 0x01, 127, 0, 0, 1, 0, 0]))
        await writer.drain()
        return upstream

    async def _connect(self, first, reader, writer):
        head = first + await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, authority, _ = lines[0].split(" ", 2)
        host, _, port = authority.rpartition(":")
        host = host.strip("[]")
        headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}
        if method != "CONNECT":
            return await self._forward(head, lines[0], headers, writer)
        with self.lock:
            self.tunnels.append({"kind": "connect", "atyp": "domain", "host": host, "port": int(port),
                                 "user": headers.get("proxy-authorization")})
        address = self._address(host)
        if address is None:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            return None
        upstream = await asyncio.open_connection(address, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        return upstream

    async def _forward(self, head, request_line, headers, writer):
        """A plain-HTTP request in absolute form (GET http://host:port/path): the connection is piped to that
        server as it is, this request and any that follow on it (the test servers accept absolute-form targets)."""
        url = request_line.split(" ")[1]
        authority = url.split("://", 1)[1].split("/", 1)[0]
        host, _, port = authority.rpartition(":") if authority.count(":") == 1 or "]:" in authority else (authority, "", "80")
        host = host.strip("[]")
        with self.lock:
            self.tunnels.append({"kind": "forward", "atyp": "domain", "host": host, "port": int(port),
                                 "user": headers.get("proxy-authorization")})
        address = self._address(host)
        if address is None:
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
            return None
        upstream_reader, upstream_writer = await asyncio.open_connection(address, int(port))
        upstream_writer.write(head)
        await upstream_writer.drain()
        return upstream_reader, upstream_writer
