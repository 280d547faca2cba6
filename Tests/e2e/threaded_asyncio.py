"""A TCP server of the e2e suite run on an asyncio loop in a thread of the test process: start() returns once it
listens on 127.0.0.1 (its port in `port`), stop() closes the listener and every connection and ends the thread.
Subclasses write `async def _serve(self, reader, writer)` and may set `ssl_context` and `limit`."""
import asyncio
import threading


class ThreadedAsyncioServer:
    ssl_context = None
    limit = 2 ** 16

    def __init__(self):
        self.port = None
        self._loop = None
        self._server = None
        self._thread = None

    def start(self):
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._listen())
            ready.set()
            self._loop.run_forever()
            self._loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait()
        return self.port

    async def _listen(self):
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_context, limit=self.limit)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader, writer):
        raise NotImplementedError

    def stop(self):
        if not self._loop:
            return

        async def shut_down():
            self._server.close()
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shut_down(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop = None
